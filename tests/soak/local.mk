# tests/soak: apps/rrt_stress for a bounded time on every transport built (soak.sh).
TESTS += tests/soak/soak.sh
EXTRA_DIST += tests/soak/soak.sh

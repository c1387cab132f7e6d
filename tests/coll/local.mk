# tests/coll: the multi-process collective suite (included from runtime/coll/local.mk).
# coll_check runs every collective against a local serial reference; tests/coll/testlist forces
# the algorithm sets; coll_suite.sh runs the list through tests/mp/run_testlist.sh.
check_PROGRAMS += tests/coll/coll_check
tests_coll_coll_check_SOURCES = tests/coll/coll_check.c
tests_coll_coll_check_LDADD = librrt.la -lm
tests_coll_coll_check_LDFLAGS = $(AM_LDFLAGS) -no-install
check_PROGRAMS += tests/coll/coll_shm_race
tests_coll_coll_shm_race_SOURCES = tests/coll/coll_shm_race.c
tests_coll_coll_shm_race_LDADD = librrt.la
tests_coll_coll_shm_race_LDFLAGS = $(AM_LDFLAGS) -no-install
check_PROGRAMS += tests/coll/coll_map_fail
tests_coll_coll_map_fail_SOURCES = tests/coll/coll_map_fail.c
tests_coll_coll_map_fail_LDADD = librrt.la
tests_coll_coll_map_fail_LDFLAGS = $(AM_LDFLAGS) -no-install
check_PROGRAMS += tests/coll/coll_barrier
tests_coll_coll_barrier_SOURCES = tests/coll/coll_barrier.c
tests_coll_coll_barrier_LDADD = librrt.la
tests_coll_coll_barrier_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/coll/coll_suite.sh tests/coll/coll_tcp.sh tests/coll/coll_direct.sh \
	tests/coll/coll_shared_buffers.sh
EXTRA_DIST += tests/coll/coll_suite.sh tests/coll/coll_tcp.sh tests/coll/coll_direct.sh \
	tests/coll/coll_shared_buffers.sh \
	tests/coll/testlist

#!/bin/bash
# Valgrind memcheck over the unit tests (GoogleTest binaries): no invalid read or write, no use
# of uninitialized values, no definite or indirect leak. Third-party libraries get suppressions
# (rrt.supp, each entry says why); rrt's own code gets none. Run by .ci/run on the plain build
# (memcheck cannot run sanitizer builds):
#   tests/valgrind/memcheck.sh [BUILDDIR]
# Exits 1 when any binary has an error, 77 when valgrind is missing. coll_test runs its kernel,
# pattern, selection and vector-pool tests here; its algorithm tests (every collective at 1..16
# simulated ranks: a minute natively, far too long under memcheck) only with MEMCHECK_ALL=1 (and
# in a whole make check under ASan, which CI leaves out for time: see .ci/run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${top_builddir:-$(cd "$here/../.." && pwd)}}
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
status=0
for t in tests/unit/core_test tests/unit/shm_test tests/unit/coll_test tests/launcher/launcher_unit; do
  bin="$build/$t"
  filter=()
  [ "$t" = tests/unit/coll_test ] && [ -z "${MEMCHECK_ALL:-}" ] &&
    filter=(--gtest_filter='CollKernels.*:CollPatterns.*:CollSelection.*:VectorPool.*')
  [ -x "$bin" ] || { echo "FAIL: $bin not built (make check builds it)"; status=1; continue; }
  log=$(mktemp "${TMPDIR:-/tmp}/rrt-memcheck.XXXXXX")
  start=$(date +%s)
  # Benchmarks off (unset); the shm transport tests fork ranks: --trace-children follows them.
  if env -u RRT_SHM_BENCH timeout 900 valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
      --track-origins=yes --trace-children=yes --child-silent-after-fork=no \
      --suppressions="$here/rrt.supp" --num-callers=30 "$bin" --gtest_brief=1 "${filter[@]}" >"$log" 2>&1; then
    echo "ok: $t clean under memcheck ($(( $(date +%s) - start )) s, $(grep -c 'ERROR SUMMARY: 0 errors' "$log") processes)"
  else
    echo "FAIL: $t under memcheck (exit $?):"
    grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in)|ERROR SUMMARY|at 0x|by 0x|FAILED' "$log" | head -80
    status=1
  fi
  rm -f "$log"
done
exit $status

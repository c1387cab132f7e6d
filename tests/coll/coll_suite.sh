#!/bin/sh
# make check entry: runs tests/coll/testlist through tests/mp/run_testlist.sh. That runner looks
# for programs in $top_builddir/tests/mp/, so a scratch tree of links presents ours there.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-coll.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests/mp"
ln -s "$top_builddir/rrun" "$t/rrun"
ln -s "$top_builddir/tests/coll/coll_check" "$t/tests/mp/coll_check"
ln -s "$top_builddir/tests/coll/coll_shm_race" "$t/tests/mp/coll_shm_race"
ln -s "$top_builddir/tests/coll/coll_map_fail" "$t/tests/mp/coll_map_fail"
ln -s "$top_builddir/tests/coll/coll_barrier" "$t/tests/mp/coll_barrier"
top_builddir=$t "$top_srcdir/tests/mp/run_testlist.sh" "$@" "$top_srcdir/tests/coll/testlist"

#!/bin/sh
# make check entry: the collective suite (tests/coll/testlist) and its eager-only and
# rendezvous-only variants (tests/coll/testlist.verbs) with RRT_TRANSPORTS=verbs over the software
# RDMA device. Like tests/coll/coll_suite.sh, a scratch tree presents coll_check where
# run_testlist.sh looks for programs.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
# What tests/softrdma/env.sh does (not sourced: "." would hand it this script's arguments).
softrdma_lib=$(cd "$top_builddir/tests/softrdma/lib" 2>/dev/null && pwd)
if [ -z "$softrdma_lib" ] || [ ! -f "$softrdma_lib/libibverbs.so.1" ]; then
  echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99
fi
LD_LIBRARY_PATH="$softrdma_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
t=$(mktemp -d "${TMPDIR:-/tmp}/rrt-verbs-coll.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests/mp"
ln -s "$top_builddir/rrun" "$t/rrun"
ln -s "$top_builddir/tests/coll/coll_check" "$t/tests/mp/coll_check"
RRT_TRANSPORTS=verbs
export RRT_TRANSPORTS
top_builddir=$t "$top_srcdir/tests/mp/run_testlist.sh" "$@" "$top_srcdir/tests/coll/testlist" \
  "$top_srcdir/tests/coll/testlist.verbs"

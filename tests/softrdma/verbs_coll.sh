#!/bin/sh
# make check entry: the collective suite (tests/coll/testlist) and its eager-only and
# rendezvous-only variants (tests/coll/testlist.verbs) with RRT_TRANSPORTS=verbs over the software
# RDMA device, through tests/coll/coll_suite.sh (as tests/coll/coll_tcp.sh does for TCP).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
# What tests/softrdma/env.sh does (not sourced: "." would hand it this script's arguments).
softrdma_lib=$(cd "$top_builddir/tests/softrdma/lib" 2>/dev/null && pwd)
if [ -z "$softrdma_lib" ] || [ ! -f "$softrdma_lib/libibverbs.so.1" ]; then
  echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99
fi
LD_LIBRARY_PATH="$softrdma_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
RRT_TRANSPORTS=verbs
export RRT_TRANSPORTS top_builddir top_srcdir
exec "$top_srcdir/tests/coll/coll_suite.sh" "$@" "$top_srcdir/tests/coll/testlist.verbs"

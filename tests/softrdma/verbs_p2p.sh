#!/bin/sh
# make check entry: the point-to-point suite (tests/mp/testlist) and the verbs variants
# (tests/mp/testlist.verbs) with RRT_TRANSPORTS=verbs over the software RDMA device.
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
export RRT_TRANSPORTS top_builddir
exec "$top_srcdir/tests/mp/run_testlist.sh" "$@" "$top_srcdir/tests/mp/testlist" \
  "$top_srcdir/tests/mp/testlist.verbs"

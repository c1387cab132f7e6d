#!/bin/sh
# make check entry: the point-to-point suite (tests/mp/testlist) and the verbs variants
# (tests/mp/testlist.verbs) with RRT_TRANSPORTS=verbs over the software RDMA device.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/softrdma/env.sh" || { echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99; }
RRT_TRANSPORTS=verbs
export RRT_TRANSPORTS top_builddir
exec "$top_srcdir/tests/mp/run_testlist.sh" "$@" "$top_srcdir/tests/mp/testlist" \
  "$top_srcdir/tests/mp/testlist.verbs"

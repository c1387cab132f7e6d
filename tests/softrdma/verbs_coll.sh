#!/bin/sh
# make check entry: the collective suite (tests/coll/testlist) and its eager-only and
# rendezvous-only variants (tests/coll/testlist.verbs) with RRT_TRANSPORTS=verbs over the software
# RDMA device, through tests/coll/coll_suite.sh (as tests/coll/coll_tcp.sh does for TCP).
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
. "$top_srcdir/tests/softrdma/env.sh" || { echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99; }
RRT_TRANSPORTS=verbs
export RRT_TRANSPORTS top_builddir top_srcdir
exec "$top_srcdir/tests/coll/coll_suite.sh" "$@" "$top_srcdir/tests/coll/testlist.verbs"

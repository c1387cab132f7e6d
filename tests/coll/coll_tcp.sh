#!/bin/sh
# make check entry: the collective suite (tests/coll/testlist) over the TCP transport only.
RRT_TRANSPORTS=tcp
export RRT_TRANSPORTS
exec "${top_srcdir:-$(dirname "$0")/../..}/tests/coll/coll_suite.sh" "$@"

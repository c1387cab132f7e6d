#!/bin/sh
# make check entry: the point-to-point lists (testlist, testlist.protocols, testlist.tcp) with
# every rank pair forced onto the TCP transport (RRT_TRANSPORTS=tcp: loopback connections
# between ranks of this node, no shared memory).
d=${top_srcdir:-$(dirname "$0")/../..}/tests/mp
RRT_TRANSPORTS=tcp
export RRT_TRANSPORTS
exec "$d/run_testlist.sh" "$d/testlist" "$d/testlist.protocols" "$d/testlist.tcp"

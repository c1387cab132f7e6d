#!/usr/bin/env python3
"""Checks the RRT_STATS=1 output of a 4-rank job on the two namespace hosts (ranks 0,1 on host A,
2,3 on host B): every same-host pair sent over shm, every cross-host pair over a TCP connection
from the sender's host address to the receiver's, every pair in both directions.
    mh_stats.py OUTPUT ADDR_A ADDR_B LABEL
Prints PASS or FAIL lines; exits 1 on any failure."""
import re, sys
text = open(sys.argv[1]).read()
label = sys.argv[4]
addr = {0: sys.argv[2], 1: sys.argv[2], 2: sys.argv[3], 3: sys.argv[3]}  # by-slot: 0,1 on A
host = {0: 'A', 1: 'A', 2: 'B', 3: 'B'}
node = dict((int(r), int(n)) for r, n in re.findall(r'\[rrt (\d+)\] stats: node (\d+) sent', text))
lines = re.findall(r'\[rrt (\d+)\] stats: to (\d+) node (\d+) (\w+)(?: (\S+))? (\d+) msgs (\d+) bytes', text)
bad = []
if sorted(node) != [0, 1, 2, 3]:
    bad.append('summary lines from ranks %s, want 0-3' % sorted(node))
elif not (node[0] == node[1] != node[2] == node[3]):
    bad.append('PMIx node ids %s: want ranks 0,1 on one node and 2,3 on another' % node)
seen = {}
for r, p, n, tx, route, msgs, nbytes in lines:
    r, p = int(r), int(p)
    seen[(r, p)] = (tx, route, int(msgs), int(nbytes))
    if host[r] == host[p]:
        if tx != 'shm':
            bad.append('rank %d -> %d (same host) went over %s' % (r, p, tx))
        continue
    # "+K" after the route: K stripe streams (RRT_TCP_STREAMS) up besides the first connection
    m = re.fullmatch(r'\[?([0-9a-f.:]+?)\]?:\d+->\[?([0-9a-f.:]+?)\]?:\d+(?:\+\d+)?', route or '')
    if tx != 'tcp' or not m:
        bad.append('rank %d -> %d (other host) went over %s %s' % (r, p, tx, route))
    elif m.group(1) != addr[r] or m.group(2) != addr[p]:
        bad.append('rank %d -> %d: connection %s, want %s -> %s' % (r, p, route, addr[r], addr[p]))
for r in range(4):
    for p in range(4):
        if r != p and (r, p) not in seen:
            bad.append('no traffic counted from rank %d to rank %d' % (r, p))
for b in bad:
    print('FAIL: [%s] %s' % (label, b))
if bad:
    sys.exit(1)
for (r, p), (tx, route, msgs, nbytes) in sorted(seen.items()):
    print('    rank %d -> %d: %s %s %d msgs %d bytes' % (r, p, tx, route or '', msgs, nbytes))
print('PASS: [%s] same-host pairs over shm, cross-host pairs over TCP between %s and %s'
      % (label, sys.argv[2], sys.argv[3]))

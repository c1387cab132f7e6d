#!/bin/sh
# Fidelity check with a verbs program nobody here wrote: Debian's ibv_rc_pingpong, server and
# client on 127.0.0.1, over the software RDMA device; busy-polling and event (-e) modes, and a
# data check (-c). Skipped when ibverbs-utils is not installed.
command -v ibv_rc_pingpong >/dev/null 2>&1 || { echo "ibv_rc_pingpong not installed"; exit 77; }
. "$top_srcdir/tests/softrdma/env.sh" "$top_builddir" || exit 99

. "$top_srcdir/tests/softrdma/pingpong_pair.sh"

set -e
pingpong_pair ibv_rc_pingpong -n 200
pingpong_pair ibv_rc_pingpong -n 200 -e
pingpong_pair ibv_rc_pingpong -n 100 -s 65536 -c
pingpong_pair ibv_rc_pingpong -n 100 -s 32 -r 8 -e -c
echo "ibv_rc_pingpong over softrdma0: ok"

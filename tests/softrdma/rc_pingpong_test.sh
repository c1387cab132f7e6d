#!/bin/sh
# Fidelity check with a verbs program nobody here wrote: Debian's ibv_rc_pingpong, server and
# client on 127.0.0.1, over the software RDMA device; busy-polling and event (-e) modes, and a
# data check (-c). Skipped when ibverbs-utils is not installed.
command -v ibv_rc_pingpong >/dev/null 2>&1 || { echo "ibv_rc_pingpong not installed"; exit 77; }
. "$top_srcdir/tests/softrdma/env.sh" "$top_builddir" || exit 99

run_pair() {  # options...
  port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
  log=$(mktemp)
  timeout 60 ibv_rc_pingpong -d softrdma0 -g 0 -p "$port" "$@" >"$log" 2>&1 &
  server=$!
  # the server listens once its QP is up; retry the client until it connects
  tries=0
  until timeout 60 ibv_rc_pingpong -d softrdma0 -g 0 -p "$port" "$@" 127.0.0.1; do
    tries=$((tries + 1))
    [ $tries -lt 20 ] || { kill "$server" 2>/dev/null; cat "$log"; rm -f "$log"; return 1; }
    sleep 0.2
  done
  wait "$server"; rc=$?
  cat "$log"; rm -f "$log"
  return $rc
}

set -e
run_pair -n 200
run_pair -n 200 -e
run_pair -n 100 -s 65536 -c
run_pair -n 100 -s 32 -r 8 -e -c
echo "ibv_rc_pingpong over softrdma0: ok"

#!/bin/busybox sh
# PID 1 of the Soft-RoCE guest (tests/softroce/README.md). It sets up a real kernel RDMA stack —
# Debian's rdma_rxe bound to dummy0, a netdev whose packets go nowhere, in a guest that has no
# other network interface than lo — runs rdma-core's tools and rrt's verbs suite on it, and
# reports one line per test on the second serial port (/dev/ttyS1):
#   SOFTROCE PASS|FAIL|SKIP NAME [detail]      one per test
#   SOFTROCE LOG NAME: TEXT                    the tail of a failing test's output
#   SOFTROCE INFO rxe0 PROBE NAME: VALUE       what verbs_probe found out about rxe
#   SOFTROCE TIME NAME SECONDS                 guest uptime at milestones (boot, rxe, done)
#   SOFTROCE DONE                              the last line: everything ran
# then powers off. /softroce/conf (written by softroce_test.sh) sets SOFTROCE_TEST_TIMEOUT,
# MP_TIMEOUT, SOFTROCE_RRT (0: skip rrt), SOFTROCE_RRT_TRANSPORTS (verbs), SOFTROCE_RRT_BUILT (1
# when the build has that transport; else SOFTROCE_RRT_WHY says why not), SOFTROCE_FILTER (a
# regular expression for testlist lines) and SOFTROCE_VERBOSE.
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin 2>/dev/null
export PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root TMPDIR=/tmp
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
hostname softroce

SOFTROCE_TEST_TIMEOUT=60 MP_TIMEOUT=60 SOFTROCE_RRT=1 SOFTROCE_RRT_TRANSPORTS=verbs
SOFTROCE_RRT_BUILT=0 SOFTROCE_RRT_WHY= SOFTROCE_FILTER= SOFTROCE_VERBOSE=0
. /softroce/conf

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() { echo "SOFTROCE $*" >&3; }
uptime_s() { read -r up _ </proc/uptime; echo "$up"; }
begin() { read -r up _ </proc/uptime; started=${up%.*}${up#*.}; }
elapsed() { read -r up _ </proc/uptime; now=${up%.*}${up#*.}; e=$(( (now - started) / 10 )); echo "$((e / 10)).$((e % 10))s"; }
started=0
finish() { say TIME done "$(uptime_s)"; say DONE; sync; poweroff -f; sleep 5; echo o >/proc/sysrq-trigger; }
say TIME boot "$(uptime_s)"

# result NAME STATUS LOG: PASS on status 0, SKIP on 77, FAIL with the log's tail otherwise; the
# seconds since the last `begin`
result() {
  if [ "$2" -eq 0 ]; then say PASS "$1" "($(elapsed))"
  elif [ "$2" -eq 77 ]; then say SKIP "$1" "$(tail -n 1 "$3")"
  else
    say FAIL "$1" "(exit $2, $(elapsed))"
    tail -n 25 "$3" | while IFS= read -r l; do say LOG "$1: $l"; done
  fi
  if [ "$SOFTROCE_VERBOSE" = 1 ] || [ "$2" -ne 0 ]; then
    echo "--- $1 (exit $2)"; cat "$3"
  fi
}
# pair NAME "SERVER COMMAND" "CLIENT COMMAND" [warn]: a server and a client in this guest; the
# client is retried until the server listens. A server that exits after a failed client try
# (perftest's servers give up when a client drops during the key exchange) is started again,
# three rounds at most; every client try's output stays in the log. With "warn", a failure is
# reported as WARN, not FAIL: a third-party tool's own flakiness on rxe, not rrt's.
pair() {
  name=$1
  log=/tmp/$name.log
  if ! command -v "${2%% *}" >/dev/null 2>&1; then
    echo "${2%% *} is not installed on the host (rdma-core / perftest)" >"$log"
    result "$name" 77 "$log"; return
  fi
  begin
  : >"$log"
  round=1 rc=1
  while [ $round -le 3 ] && [ $rc -ne 0 ]; do
    timeout "$SOFTROCE_TEST_TIMEOUT" $2 >"$log.server" 2>&1 &
    server=$!
    tries=0
    while [ $tries -lt 20 ]; do
      sleep 1
      tries=$((tries + 1))
      timeout "$SOFTROCE_TEST_TIMEOUT" $3 >"$log.client" 2>&1 && { rc=0; break; }
      echo "# client: $3 (round $round, try $tries: exit $?)" >>"$log"; cat "$log.client" >>"$log"
      kill -0 $server 2>/dev/null || break   # the server is gone: start it again
    done
    if [ $rc -eq 0 ]; then wait $server; rc=$?
    elif kill -0 $server 2>/dev/null; then  # it never took a client: another round would not help
      kill $server; wait $server; round=3
    else wait $server; fi
    { echo "# server: $2 (round $round)"; cat "$log.server"; } >>"$log"
    round=$((round + 1))
  done
  [ $rc -eq 0 ] && { echo "# client: $3 (round $((round - 1)), try $tries: exit 0)"; cat "$log.client"; } >>"$log"
  if [ $rc -ne 0 ] && [ "${4:-}" = warn ]; then
    say WARN "$name" "(exit $rc, $(elapsed): perftest over rdma_cm, not counted)"
    tail -n 25 "$log" | while IFS= read -r l; do say LOG "$name: $l"; done
    return
  fi
  result "$name" $rc "$log"
}

# 1. The kernel RDMA stack: modules, dummy0 (no carrier to anywhere), the rxe device on it.
rxe_up() {
  while read -r ko; do
    case $ko in dummy.ko) insmod "/lib/modules/$ko" numdummies=0 ;; *) insmod "/lib/modules/$ko" ;; esac ||
      { echo "insmod $ko failed"; return 1; }
  done </lib/modules/load-order
  ip link set lo up &&
  ip link add dummy0 type dummy &&
  ip addr add 10.11.12.1/24 dev dummy0 &&
  ip link set dummy0 up &&
  rdma link add rxe0 type rxe netdev dummy0 &&
  rdma link show &&
  ls -l /dev/infiniband &&
  ibv_devinfo -v -d rxe0 >/tmp/devinfo && cat /tmp/devinfo &&
  grep -q 'state:.*PORT_ACTIVE' /tmp/devinfo &&
  # the interfaces: lo and dummy0, nothing that reaches outside the guest
  ip -o link show && [ "$(ip -o link show | grep -cv ': \(lo\|dummy0\):')" = 0 ]
}
begin
rxe_up >/tmp/rxe_setup.log 2>&1
result rxe_setup $? /tmp/rxe_setup.log
say TIME rxe "$(uptime_s)"
if ! grep -q PORT_ACTIVE /tmp/devinfo 2>/dev/null; then
  finish
fi

# 2. rdma-core's own tools on rxe0: verbs over RoCEv2 (GID 1 is dummy0's IPv4 address), and
#    librdmacm (rping, ucmatose, perftest's -R) through rdma_ucm.
a=10.11.12.1
pair ibv_rc_pingpong "ibv_rc_pingpong -d rxe0 -g 1 -n 200 -p 18515" "ibv_rc_pingpong -d rxe0 -g 1 -n 200 -p 18515 $a"
pair ibv_rc_pingpong_events_64k "ibv_rc_pingpong -d rxe0 -g 1 -n 50 -s 65536 -e -c -p 18516" "ibv_rc_pingpong -d rxe0 -g 1 -n 50 -s 65536 -e -c -p 18516 $a"
pair ibv_srq_pingpong "ibv_srq_pingpong -d rxe0 -g 1 -n 100 -q 4 -p 18517" "ibv_srq_pingpong -d rxe0 -g 1 -n 100 -q 4 -p 18517 $a"
pair ibv_ud_pingpong "ibv_ud_pingpong -d rxe0 -g 1 -n 100 -s 1024 -p 18518" "ibv_ud_pingpong -d rxe0 -g 1 -n 100 -s 1024 -p 18518 $a"
pair rping "rping -s -a $a -p 18519 -C 20 -S 4096 -V" "rping -c -a $a -p 18519 -C 20 -S 4096 -V"
pair ucmatose "ucmatose -b $a -p 18520 -c 2 -C 10" "ucmatose -s $a -b $a -p 18520 -c 2 -C 10"
pair ib_write_bw "ib_write_bw -d rxe0 -x 1 -n 200 -s 65536 -p 18521" "ib_write_bw -d rxe0 -x 1 -n 200 -s 65536 -p 18521 $a"
# perftest's rdma_cm connection (-R) failed in one CI run (9747283, stop 24; the server never took the
# client, three rounds): reported, not counted. rping and ucmatose cover librdmacm on rxe.
pair ib_read_bw_rdmacm "ib_read_bw -d rxe0 -x 1 -R -n 100 -s 65536 -p 18522" "ib_read_bw -d rxe0 -x 1 -R -n 100 -s 65536 -p 18522 $a" warn
pair ib_send_lat "ib_send_lat -d rxe0 -x 1 -n 100 -s 64 -p 18523" "ib_send_lat -d rxe0 -x 1 -n 100 -s 64 -p 18523 $a"
# how rxe answers where verbs implementations may differ (tests/softroce/verbs_probe.c)
if [ -x /rrt/tests/softroce/verbs_probe ]; then
  begin
  timeout "$SOFTROCE_TEST_TIMEOUT" /rrt/tests/softroce/verbs_probe -d rxe0 -g 1 -w 5 >/tmp/probe.log 2>&1
  rc=$?
  grep '^PROBE ' /tmp/probe.log | while IFS= read -r l; do say INFO "rxe0 $l"; done
  result verbs_probe $rc /tmp/probe.log
fi
say TIME tools "$(uptime_s)"

# 3. rrt through rrun. First a plain 2-rank job on the default transports (shared memory): the
#    guest holds a working rrt + PMIx. Then the suite with RRT_TRANSPORTS=$SOFTROCE_RRT_TRANSPORTS
#    (verbs: every pair of ranks, also two on this one guest, talks through rxe0), once per verbs
#    connection backend when the build has RRT_VERBS_CM (testlist with pmix, testlist.rdmacm with
#    rdmacm).
export LD_LIBRARY_PATH=/rrt/lib top_builddir=/rrt top_srcdir=/rrt MP_TIMEOUT
# run_list NAME_PREFIX LIST: each line of LIST as one test
run_list() {
  n=0
  while IFS= read -r raw || [ -n "$raw" ]; do
    line=${raw%%#*}
    [ -n "$(echo "$line" | tr -d ' \t')" ] || continue
    if [ -n "$SOFTROCE_FILTER" ] && ! echo "$line" | grep -qE "$SOFTROCE_FILTER"; then continue; fi
    n=$((n + 1))
    echo "$line" >/tmp/one.list
    name=$(echo "$1 $line" | tr -s ' \t' '_')
    begin
    bash /rrt/tests/mp/run_testlist.sh -v /tmp/one.list >"/tmp/rrt.$n.log" 2>&1
    result "$name" $? "/tmp/rrt.$n.log"
  done <"$2"
}
rrt_suite() {
  echo "p2p_sizes 2" >/tmp/one.list
  begin
  bash /rrt/tests/mp/run_testlist.sh -v /tmp/one.list >/tmp/rrt_in_guest.log 2>&1
  result rrt_in_guest $? /tmp/rrt_in_guest.log
  t=$SOFTROCE_RRT_TRANSPORTS
  if [ "$SOFTROCE_RRT_BUILT" != 1 ]; then
    echo "$SOFTROCE_RRT_WHY" >/tmp/rrt_transport.log
    result "rrt_transport_$t" 77 /tmp/rrt_transport.log
    return
  fi
  # the transport must be listed by rrt_info in a 2-rank job (rank 1 reached through it)
  log=/tmp/rrt_transport.log
  begin
  RRT_TRANSPORTS=$t timeout "$SOFTROCE_TEST_TIMEOUT" /rrt/rrun -n 2 /rrt/apps/rrt_info >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && ! sed -n '/^transports/,/^tunables/p' "$log" | grep -q "^  $t "; then
    echo "rrt_info lists no '$t' transport" >>"$log"; rc=1
  fi
  if [ $rc -eq 0 ] && grep -q 'no transport reaches' "$log"; then rc=1; fi
  result "rrt_transport_$t" $rc "$log"
  [ $rc -eq 0 ] || return
  export RRT_TRANSPORTS=$t
  # the connection-backend tunable: RRT_VERBS_CM (RRT_IB_CM in builds of one earlier day)
  cm=$(sed -nE 's/^  (RRT_(VERBS|IB)_CM) .*/\1/p' "$log" | head -n 1)
  if [ "$t" = verbs ] && [ -n "$cm" ]; then
    export "$cm=pmix"
    run_list pmix /rrt/tests/softroce/testlist
    export "$cm=rdmacm"
    run_list rdmacm /rrt/tests/softroce/testlist.rdmacm
    unset "$cm"
    # strangers' rdma_cm requests (wrong private data) refused while a job runs
    if [ -x /rrt/tests/softroce/cm_stranger ] && [ -f /rrt/tests/softroce/rdmacm_auth.sh ]; then
      begin
      bash /rrt/tests/softroce/rdmacm_auth.sh >/tmp/rdmacm_auth.log 2>&1
      result rdmacm_auth $? /tmp/rdmacm_auth.log
    fi
  else
    run_list "$t" /rrt/tests/softroce/testlist
  fi
  unset RRT_TRANSPORTS
}
if [ "$SOFTROCE_RRT" = 1 ]; then
  rrt_suite
else
  echo "disabled by RRT_SOFTROCE_RRT=0" >/tmp/off.log
  result rrt 77 /tmp/off.log
fi
finish

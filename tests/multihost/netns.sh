# Sourced by the multi-host tests: two "hosts" made of network namespaces on this machine.
#
#   mh_require        exits 77 (skip) with a reason unless we may create namespaces and
#                     Open MPI's mpirun and unshare are there
#   mh_require_netns  the same without Open MPI (tests that start the job another way)
#   mh_setup          creates namespaces $MH_A and $MH_B (named after this shell's pid, so
#                     tests may run at once), joined by one veth pair: $MH_ADDR_A/24 and
#                     $MH_ADDR_B/24, and the IPv6 ULAs $MH_ADDR6_A/64 and $MH_ADDR6_B/64;
#                     loopback up in each (PMIx clients reach their server over it).
#                     Traffic between them never leaves these two namespaces.
#   mh_mpirun ARGS    Open MPI's mpirun, started inside $MH_A (hostname $MH_A), told that
#                     the hosts are $MH_A and $MH_B with 2 slots each and that it reaches
#                     $MH_B through ns_agent.sh (ip netns exec + a hostname of its own)
#                     instead of ssh; ARGS are mpirun's (-n, -x, the program)
#   mh_pids           the processes still inside either namespace
#   mh_teardown       kills what is left inside the namespaces and deletes them
# Every process inside the namespaces was started by the test, so killing by namespace never
# touches anything else on the machine.
MH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MH_A=rrtmh$$a
MH_B=rrtmh$$b
MH_ADDR_A=10.250.0.1
MH_ADDR_B=10.250.0.2
MH_ADDR6_A=fd72:7274::1
MH_ADDR6_B=fd72:7274::2

mh_skip() { echo "SKIP: $*"; exit 77; }

mh_require() {
  command -v mpirun.openmpi >/dev/null 2>&1 ||
    mh_skip "Open MPI's mpirun.openmpi not found (Debian: openmpi-bin)"
  mh_require_netns
}

mh_require_netns() {
  command -v ip >/dev/null 2>&1 || mh_skip "no ip command (Debian: iproute2)"
  command -v unshare >/dev/null 2>&1 || mh_skip "no unshare command (Debian: util-linux)"
  [ "$(id -u)" = 0 ] || mh_skip "network namespaces need root (CI runs this as root)"
  local probe=rrtmh$$probe
  ip netns add "$probe" 2>/dev/null || mh_skip "ip netns add is not permitted here"
  if ! ip netns exec "$probe" unshare --uts true 2>/dev/null; then
    ip netns del "$probe"
    mh_skip "ip netns exec / unshare --uts is not permitted here"
  fi
  ip netns del "$probe"
}

# The caller traps EXIT with mh_teardown (and its own clean-up) before calling mh_setup.
mh_setup() {
  ip netns add "$MH_A" && ip netns add "$MH_B" || return 1
  ip link add veth0 netns "$MH_A" type veth peer name veth0 netns "$MH_B" || return 1
  ip -n "$MH_A" addr add "$MH_ADDR_A/24" dev veth0 || return 1
  ip -n "$MH_B" addr add "$MH_ADDR_B/24" dev veth0 || return 1
  # nodad: usable at once, without duplicate address detection's wait
  ip -n "$MH_A" -6 addr add "$MH_ADDR6_A/64" dev veth0 nodad || return 1
  ip -n "$MH_B" -6 addr add "$MH_ADDR6_B/64" dev veth0 nodad || return 1
  local n
  for n in "$MH_A" "$MH_B"; do
    ip -n "$n" link set lo up && ip -n "$n" link set veth0 up || return 1
  done
  # The carrier comes up asynchronously: a rank started before it would find no usable
  # interface (rrt then takes loopback only) and be unreachable from the other host.
  local i
  for n in "$MH_A" "$MH_B"; do
    for i in $(seq 100); do
      ip -n "$n" -o link show veth0 | grep -q 'LOWER_UP' && break
      sleep 0.1
    done
    ip -n "$n" -o link show veth0 | grep -q 'LOWER_UP' || { echo "veth0 in $n never came up"; return 1; }
  done
}

mh_pids() { ip netns pids "$MH_A" 2>/dev/null; ip netns pids "$MH_B" 2>/dev/null; }

mh_teardown() {
  local p
  p=$(mh_pids)
  [ -n "$p" ] && kill -9 $p 2>/dev/null
  ip netns del "$MH_A" 2>/dev/null
  ip netns del "$MH_B" 2>/dev/null
  return 0
}

mh_mpirun() { "$MH_DIR/ns_mpirun.sh" "$MH_A" "$MH_B" "$@"; }

#!/bin/bash
# bench/netns_compare.sh: point-to-point latency and bandwidth between two hosts made of network
# namespaces (tests/multihost/netns.sh: a veth pair, one rank per host), rrt against Open MPI
# over TCP, interleaved runs, medians. Root only; run by hand, never by make check. (MPICH is
# left out: hydra's proxy in the second namespace did not connect back to mpiexec here; compare
# it on loopback with bench/compare --tcp.)
#
#   bench/netns_compare.sh [REPS] [LAT_SIZES] [BW_SIZES]   (default 5 8:8 4194304:4194304)
#   NSBENCH_STREAMS="1 2 4" bench/netns_compare.sh ...     rrt once per RRT_TCP_STREAMS value
#                                                          (columns rrt-s1, rrt-s2, ...)
#
# rrt: its apps under Open MPI's mpirun (rrun is single-node), across the hosts, so over TCP.
# Open MPI: bench/mpi twins, --mca btl tcp,self --mca pml ob1. Both with --bind-to none: each
# namespace "host" would otherwise pin its rank to core 0, both ranks on one core of this machine.
# For the machine's raw TCP figures run bench/tcp_raw.c (loopback: a veth pair between two
# namespaces is the same in-kernel path).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$here}
reps=${1:-5}
streams=${NSBENCH_STREAMS:-1}
lat_sizes=${2:-8:8}
bw_sizes=${3:-4194304:4194304}
. "$here/tests/multihost/netns.sh"
mh_require
work=$(mktemp -d "${TMPDIR:-/tmp}/rrt-nsbench.XXXXXX")
trap 'mh_teardown; rm -rf "$work"' EXIT
mh_setup || exit 1

shared="bench/mpi/mpi_common.c apps/common/options.c apps/common/pt2pt_driver.c apps/common/coll_driver.c apps/common/device_mem.c"
for b in latency bw; do
  for cc in mpicc.openmpi; do
    (cd "$here" && $cc -O2 -w -Iapps/common -o "$work/$cc.$b" bench/mpi/mpi_$b.c $shared) || exit 1
  done
done

ompi() { timeout -k 5 300 "$MH_DIR/ns_mpirun.sh" "$MH_A" "$MH_B" --map-by node --bind-to none -n 2 "$@"; }
run_col() {  # name metric-args...: prints "size value" rows
  "$@" 2>/dev/null | awk '!/^#/ && NF>=2 {print $1, $2}'
}
for b in latency bw; do
  case $b in latency) sizes=$lat_sizes; args="-i 1000 -x 100";; bw) sizes=$bw_sizes; args="-i 20 -x 2";; esac
  for r in $(seq "$reps"); do
    for s in $streams; do
      run_col ompi -x RRT_TCP_STREAMS=$s "$build/apps/rrt_$b" -m $sizes $args | sed "s/^/rrt-s$s $b $r /"
    done
    run_col ompi --mca btl tcp,self --mca pml ob1 "$work/mpicc.openmpi.$b" -m $sizes $args | sed "s/^/ompi $b $r /"
  done
done >"$work/rows"
python3 - "$work/rows" <<'PY'
import statistics, sys, collections
d = collections.defaultdict(list)
names = []
for line in open(sys.argv[1]):
    who, b, rep, size, val = line.split()
    d[(b, int(size), who)].append(float(val))
    if who not in names:
        names.append(who)
for b, unit in (("latency", "us, lower is better"), ("bw", "MB/s, higher is better")):
    print(f"# {b} ({unit}), median of runs (count): " + " | ".join(names))
    for size in sorted({k[1] for k in d if k[0] == b}):
        cells = []
        for who in names:
            v = d.get((b, size, who))
            cells.append(f"{statistics.median(v):10.2f} ({len(v)})" if v else "         -    ")
        print(f"{size:>8}  " + "  ".join(cells))
PY

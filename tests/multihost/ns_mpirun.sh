#!/bin/sh
# Open MPI's mpirun across the namespace hosts of netns.sh:
#   ns_mpirun.sh HOST_A HOST_B MPIRUN_ARGS...
# starts mpirun.openmpi inside namespace HOST_A (hostname HOST_A) with 2 slots on each host;
# it reaches HOST_B through ns_agent.sh instead of ssh.
[ $# -ge 3 ] || { echo "usage: ns_mpirun.sh HOST_A HOST_B MPIRUN_ARGS..." >&2; exit 2; }
dir=$(cd "$(dirname "$0")" && pwd)
a=$1 b=$2
shift 2
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
exec "$dir/ns_agent.sh" "$a" mpirun.openmpi --allow-run-as-root \
  --mca plm_rsh_agent "$dir/ns_agent.sh" --host "$a:2,$b:2" "$@"

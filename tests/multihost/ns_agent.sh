#!/bin/sh
# Open MPI's remote-start agent for the test hosts of netns.sh (plm_rsh_agent): where mpirun
# would run "ssh HOST COMMAND", this runs COMMAND inside the network namespace named HOST,
# in a UTS namespace whose hostname is HOST (so PMIx sees distinct nodes).
#   ns_agent.sh [ssh-style options] HOST COMMAND...
# COMMAND is a shell command line, as ssh would pass it to the remote shell.
while [ $# -gt 0 ]; do
  case $1 in
    -x|-T|-n|-q) shift ;;
    -*) echo "ns_agent.sh: unknown option $1" >&2; exit 255 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: ns_agent.sh HOST COMMAND..." >&2; exit 255; }
host=$1
shift
ip netns list | grep -q "^$host\\b" || { echo "ns_agent.sh: no network namespace $host" >&2; exit 255; }
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"

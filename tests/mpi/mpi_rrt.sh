#!/bin/bash
# Runs the MPI test programs (built with librrt_mpi) through rrun, one line of testlist each.
# A line passes when rrun exits 0 and rank 0 printed "errors=0". Rank 0's output is kept in
# $top_builddir/tests/mpi/out/NAME.NPROCS.rrt for the comparison with Open MPI (mpi_openmpi.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
outdir=$top_builddir/tests/mpi/out
mkdir -p "$outdir"
failed=0
while read -r name np rest; do
  case "$name" in '' | '#'*) continue ;; esac
  out=$outdir/$name.$np.rrt
  "$top_builddir/rrun" -n "$np" --timeout 120 "$top_builddir/tests/mpi/$name" >"$out" 2>"$out.err" </dev/null
  rc=$?
  if [ $rc -eq 0 ] && grep -qx "errors=0" "$out"; then
    echo "PASS $name -n $np"
  else
    echo "FAIL $name -n $np (exit $rc)"
    sed 's/^/  | /' "$out" "$out.err" | tail -40
    failed=1
  fi
done <"$top_srcdir/tests/mpi/testlist"
exit $failed

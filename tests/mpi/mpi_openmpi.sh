#!/bin/bash
# The control: the same MPI test sources compiled with Debian's Open MPI (mpicc.openmpi) and run
# with mpirun.openmpi must pass and print exactly what they print under rrt (mpi_rrt.sh's
# outputs; rerun here when missing). Skips (77) where Open MPI is not installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
MPICC=${MPICC_OPENMPI:-$(command -v mpicc.openmpi)}
MPIRUN=${MPIRUN_OPENMPI:-$(command -v mpirun.openmpi)}
if [ -z "$MPICC" ] || [ -z "$MPIRUN" ]; then
  echo "SKIP: mpicc.openmpi / mpirun.openmpi not found (Debian: apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
outdir=$top_builddir/tests/mpi/out
mkdir -p "$outdir/openmpi"
failed=0
while read -r name np rest; do
  case "$name" in '' | '#'*) continue ;; esac
  if [ "$rest" = rrt-only ]; then
    echo "SKIP $name -n $np: rrt-only (not part of the Open MPI control)"
    continue
  fi
  exe=$outdir/openmpi/$name
  if [ ! -x "$exe" ] || [ "$top_srcdir/tests/mpi/$name.c" -nt "$exe" ]; then
    "$MPICC" -O1 -o "$exe" "$top_srcdir/tests/mpi/$name.c" || { echo "FAIL $name: mpicc.openmpi"; failed=1; continue; }
  fi
  ompi=$outdir/$name.$np.openmpi
  # shellcheck disable=SC2086 # rest: extra mpirun options of the testlist line, split on purpose
  timeout 180 "$MPIRUN" --allow-run-as-root --oversubscribe -n "$np" $rest "$exe" >"$ompi" 2>"$ompi.err" </dev/null
  rc=$?
  rrt=$outdir/$name.$np.rrt
  if [ ! -s "$rrt" ]; then
    "$top_builddir/rrun" -n "$np" --timeout 120 "$top_builddir/tests/mpi/$name" >"$rrt" 2>"$rrt.err" </dev/null
  fi
  if [ $rc -ne 0 ] || ! grep -qx "errors=0" "$ompi"; then
    echo "FAIL $name -n $np under Open MPI (exit $rc): the test itself is wrong"
    sed 's/^/  | /' "$ompi" "$ompi.err" | tail -20
    failed=1
  elif ! diff -u "$ompi" "$rrt" >"$outdir/$name.$np.diff"; then
    echo "FAIL $name -n $np: rrt and Open MPI printed different results"
    sed 's/^/  | /' "$outdir/$name.$np.diff"
    failed=1
  else
    echo "PASS $name -n $np (same output as Open MPI)"
  fi
done <"$top_srcdir/tests/mpi/testlist"
exit $failed

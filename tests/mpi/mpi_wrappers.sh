#!/bin/bash
# rrtmpicc / rrtmpicxx: --showme names rrt's include directory and libraries, and a program
# compiled with the wrapper (pointed at the build tree) finds rrt's mpi.h, not a system one,
# and runs under rrun.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
fail() { echo "FAIL: $*"; exit 1; }
for w in rrtmpicc rrtmpicxx; do
  [ -x "$top_builddir/$w" ] || fail "$w not built"
  show=$("$top_builddir/$w" --showme -c x.c) || fail "$w --showme"
  case "$show" in *"-I"*"/rrt/mpi"*) ;; *) fail "$w --showme lacks the rrt/mpi include dir: $show" ;; esac
  case "$show" in *-lrrt_mpi*) fail "$w --showme -c must not link: $show" ;; esac
  link=$("$top_builddir/$w" --showme:link)
  case "$link" in *-lrrt_mpi*) ;; *) fail "$w --showme:link lacks -lrrt_mpi: $link" ;; esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rrtmpicc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#ifndef RRT_MPI
#error "not rrt's mpi.h"
#endif
int main(int argc, char **argv) {
  int rank, size, *ub, flag;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("hello %d %d %d\n", size, sum, flag && *ub > 0);
  MPI_Finalize();
  return 0;
}
C
export RRT_MPI_INCDIR=$top_srcdir/include/rrt/mpi RRT_MPI_LIBDIR=$top_builddir/.libs
"$top_builddir/rrtmpicc" -O1 -o "$tmp/hello" "$tmp/hello.c" || fail "rrtmpicc could not build hello.c"
cp "$tmp/hello.c" "$tmp/hello.cc"
"$top_builddir/rrtmpicxx" -O1 -o "$tmp/hellocxx" "$tmp/hello.cc" || fail "rrtmpicxx could not build hello.cc"
out=$("$top_builddir/rrun" -n 3 --timeout 60 "$tmp/hello") || fail "rrun hello"
[ "$out" = "hello 3 3 1" ] || fail "unexpected output: $out"
out=$("$top_builddir/rrun" -n 2 --timeout 60 "$tmp/hellocxx") || fail "rrun hellocxx"
[ "$out" = "hello 2 1 1" ] || fail "unexpected output: $out"
echo "PASS rrtmpicc rrtmpicxx"

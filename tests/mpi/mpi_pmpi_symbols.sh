#!/bin/bash
# The profiling interface's symbols: every function mpi.h declares (MPI_X: a capital after MPI_,
# so not the predefined callbacks MPI_COMM_DUP_FN and friends) has its PMPI_X declared in mpi.h,
# and librrt_mpi exports PMPI_X as a defined function and MPI_X as a weak symbol (the alias
# that a tool's own MPI_X overrides). Fails when a function is added without its PMPI_ twin,
# and when the library exports an MPI_X that mpi.h does not declare. The static library, when
# built, must carry the same weak/strong pair (there the weak symbol is what lets the tool's
# strong one win the link instead of a duplicate-definition error).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
fail() { echo "FAIL: $*"; failed=1; }
failed=0
header=$top_srcdir/include/rrt/mpi/mpi.h
so=$top_builddir/.libs/librrt_mpi.so
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }

# Declarations start a line: "int MPI_Send(", "double MPI_Wtime(", "MPI_Aint MPI_Aint_add(".
declared() { grep -oE "^(int|double|MPI_Aint) $1[A-Z][a-z][A-Za-z0-9_]*\(" "$header" | sed 's/.* //; s/($//' | sort -u; }
mpi=$(declared MPI_)
pmpi=$(declared PMPI_)
n=$(echo "$mpi" | wc -l)
[ "$n" -gt 200 ] || fail "only $n MPI_ functions found in $header: the extraction is broken"
missing=$(comm -23 <(echo "$mpi") <(echo "$pmpi" | sed 's/^P//'))
[ -z "$missing" ] || fail "mpi.h declares no PMPI_ twin of: $(echo $missing)"
extra=$(comm -13 <(echo "$mpi") <(echo "$pmpi" | sed 's/^P//'))
[ -z "$extra" ] || fail "mpi.h declares PMPI_ functions without MPI_ ones: $(echo $extra)"

# nm -D --defined-only: "ADDRESS TYPE NAME"; T = defined function, W = weak defined.
syms=$(nm -D --defined-only "$so" | awk '{ print $3, $2 }' | sort)
typeof() { echo "$syms" | awk -v s="$1" '$1 == s { print $2; exit }'; }
for f in $mpi; do
  t=$(typeof "$f")
  [ "$t" = W ] || fail "$f is exported as '${t:-nothing}', not as a weak symbol (W)"
  t=$(typeof "P$f")
  [ "$t" = T ] || fail "P$f is exported as '${t:-nothing}', not as a defined function (T)"
done
exported=$(echo "$syms" | awk '$1 ~ /^MPI_[A-Z][a-z]/ { print $1 }')
undeclared=$(comm -13 <(echo "$mpi") <(echo "$exported"))
[ -z "$undeclared" ] || fail "librrt_mpi exports MPI_ functions mpi.h does not declare: $(echo $undeclared)"

a=$top_builddir/.libs/librrt_mpi.a
if [ -f "$a" ]; then
  asyms=$(nm --defined-only "$a" 2>/dev/null | awk 'NF == 3 { print $3, $2 }' | sort -u)
  for f in $mpi; do
    echo "$asyms" | grep -qx "$f W" || fail "$f is not weak in $a"
    echo "$asyms" | grep -qx "P$f T" || fail "P$f is not defined in $a"
  done
fi

[ $failed -eq 0 ] && echo "PASS $n MPI_ functions: weak MPI_ and defined PMPI_ in librrt_mpi, both declared in mpi.h"
exit $failed

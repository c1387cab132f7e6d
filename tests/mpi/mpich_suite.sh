#!/bin/bash
# Runs programs of the MPICH test suite (test/mpi of Debian's mpich source package), unmodified,
# against rrt's MPI layer: each is compiled with the build tree's rrtmpicc together with the
# suite's util/mtest.c and run through rrun with the suite's rank count (oversubscribed).
# A program passes when rrun exits 0 and the output has MPICH's " No Errors" line.
#
#   tests/mpi/mpich_suite.sh                 build and run tests/mpi/mpich_testlist
#   tests/mpi/mpich_suite.sh --survey DIR..  compile every program of DIRs (pt2pt coll ...) and run
#                                            those that compile with their first testlist count
#
# The source comes from $RRT_MPICH_SRC (a test/mpi directory), else from a cache directory
# ($RRT_MPICH_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/rrt-mpich) filled by
# `apt-get source mpich` (needs deb-src lines and dpkg-dev). Without it the script exits 77
# (automake's "skipped"). Programs are compiled with -Werror=implicit-function-declaration: a
# call outside rrt's subset is absent from mpi.h, so the program fails to compile.
# Per program: RRT_MPICH_TIMEOUT seconds (default 60). Exit status: 0 all listed passed, 1 not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$(cd "$here/../.." && pwd)}"
top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=$(cd "$top_srcdir" && pwd)
timeout_s=${RRT_MPICH_TIMEOUT:-60}
work=$top_builddir/tests/mpi/mpich
list=${RRT_MPICH_LIST:-$top_srcdir/tests/mpi/mpich_testlist}

# ---- the source ----------------------------------------------------------------------------
find_source() {
  if [ -n "${RRT_MPICH_SRC:-}" ]; then
    src=$RRT_MPICH_SRC
    return 0
  fi
  cache=${RRT_MPICH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rrt-mpich}
  src=$(ls -d "$cache"/mpich-*/test/mpi 2>/dev/null | head -1)
  [ -n "$src" ] && return 0
  if ! command -v apt-get >/dev/null || ! command -v dpkg-source >/dev/null; then
    echo "SKIP: no MPICH test suite: set RRT_MPICH_SRC, or install dpkg-dev for apt-get source"
    return 1
  fi
  mkdir -p "$cache" || return 1
  echo "fetching the MPICH source into $cache (apt-get source mpich)"
  if ! (cd "$cache" && timeout 600 apt-get source mpich >"$cache/fetch.log" 2>&1); then
    echo "SKIP: apt-get source mpich failed (no deb-src lines or no network?):"
    tail -3 "$cache/fetch.log"
    return 1
  fi
  src=$(ls -d "$cache"/mpich-*/test/mpi 2>/dev/null | head -1)
  [ -n "$src" ]
}
if ! find_source || [ ! -f "$src/util/mtest.c" ]; then
  [ -n "${src:-}" ] && echo "SKIP: $src has no util/mtest.c"
  exit 77
fi
[ -x "$top_builddir/rrtmpicc" ] && [ -x "$top_builddir/rrun" ] || {
  echo "FAIL: build the tree first (rrtmpicc, rrun missing in $top_builddir)"
  exit 1
}

# ---- the support library -------------------------------------------------------------------
export RRT_MPI_INCDIR=$top_srcdir/include/rrt/mpi RRT_MPI_LIBDIR=$top_builddir/.libs
mkdir -p "$work/bin" "$work/out"
# What the suite's configure would find on Debian 12 (x86_64, glibc).
cat >"$work/mpitestconf.h" <<'EOF'
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_USLEEP 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long
/* the suite's --enable-strictmpi: skip MPICH extensions (logical ops on floats...) */
#define USE_STRICT_MPI 1
EOF
cflags="-O1 -w -Werror=implicit-function-declaration -I$work -I$src/include"
cc() { "$top_builddir/rrtmpicc" $cflags "$@"; }
for u in mtest mtest_common mtest_single dtypes; do
  if [ ! -f "$work/$u.o" ] || [ "$work/$u.o" -ot "$top_builddir/.libs/librrt_mpi.so" ]; then
    if ! cc -c "$src/util/$u.c" -o "$work/$u.o" 2>"$work/$u.err"; then
      echo "FAIL: the suite's util/$u.c does not compile against rrt's mpi.h:"
      grep -m5 error "$work/$u.err"
      exit 1
    fi
  fi
done

# Compiles dir/name; prints the first missing identifier on failure.
build() {
  local prog=$1 exe=$work/bin/${1//\//_}
  [ -f "$exe" ] && [ "$exe" -nt "$top_builddir/.libs/librrt_mpi.so" ] && [ "$exe" -nt "$src/$prog.c" ] && return 0
  if ! cc "$src/$prog.c" "$work/mtest.o" "$work/mtest_common.o" "$work/mtest_single.o" "$work/dtypes.o" -lm -o "$exe" \
    2>"$work/out/${1//\//_}.build"; then
    grep -m1 -E "error|undefined reference" "$work/out/${1//\//_}.build" |
      grep -oE "[‘'\`][A-Za-z_0-9]+[’']" | head -1 | tr -d "‘’'\`"
    return 1
  fi
}

# Runs dir/name on np ranks with args; 0 on success.
run() {
  local prog=$1 np=$2 out
  shift 2
  out=$work/out/${prog//\//_}.$np
  (cd "$work/out" && timeout -k 5 $((timeout_s + 10)) "$top_builddir/rrun" -n "$np" \
    --timeout "$timeout_s" "$work/bin/${prog//\//_}" "$@" >"$out" 2>&1 </dev/null)
  local rc=$?
  if [ $rc -eq 0 ] && grep -qE "^ *No [Ee]rrors" "$out"; then return 0; fi
  echo "exit $rc" >>"$out"
  return 1
}

# ---- survey mode -----------------------------------------------------------------------------
if [ "${1:-}" = --survey ]; then
  shift
  total=0 nocomp=0 pass=0 fail=0
  for dir in "$@"; do
    for f in "$src/$dir"/*.c; do
      prog=$dir/$(basename "$f" .c)
      total=$((total + 1))
      tl=$src/$dir/testlist.in
      [ -f "$tl" ] || tl=$src/$dir/testlist
      np=$(awk -v n="$(basename "$f" .c)" '$1 == n { print $2; exit }' "$tl")
      if ! miss=$(build "$prog"); then
        nocomp=$((nocomp + 1))
        echo "NOCOMPILE $prog ${miss:-?}"
        continue
      fi
      [ -z "$np" ] && { echo "NOTLISTED $prog"; continue; }
      if run "$prog" "$np"; then
        pass=$((pass + 1))
        echo "PASS $prog $np"
      else
        fail=$((fail + 1))
        echo "FAIL $prog $np ($(tail -1 "$work/out/${prog//\//_}.$np"))"
      fi
    done
  done
  echo "survey: $total programs, $nocomp do not compile, $pass pass, $fail fail"
  exit 0
fi

# ---- the pinned list -------------------------------------------------------------------------
pass=0 fail=0 excluded=0
while read -r prog np args; do
  case "$prog" in '' | '#'*) continue ;; -) excluded=$((excluded + 1)); continue ;; esac
  if ! miss=$(build "$prog"); then
    echo "FAIL $prog: does not compile (${miss:-see $work/out/${prog//\//_}.build})"
    fail=$((fail + 1))
    continue
  fi
  # shellcheck disable=SC2086
  if run "$prog" "$np" $args; then
    echo "PASS $prog -n $np $args"
    pass=$((pass + 1))
  else
    echo "FAIL $prog -n $np $args"
    sed 's/^/  | /' "$work/out/${prog//\//_}.$np" | tail -20
    fail=$((fail + 1))
  fi
done <"$list"
echo "mpich suite: $pass passed, $fail failed, $excluded excluded (reasons in $list)"
[ $fail -eq 0 ]

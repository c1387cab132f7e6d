#!/bin/bash
# Builds the OSU Micro-Benchmarks (their C sources, unmodified) with the build tree's rrtmpicc
# and, as the control, with Debian's Open MPI (mpicc.openmpi), runs each through rrun and
# mpirun.openmpi with small iteration counts, and checks that every run completes and prints
# the expected shape: the OSU header line and one data row per message size, each a positive
# finite number, the same sizes under rrt as under Open MPI.
#
#   OSU_SRC=/path/to/osu-micro-benchmarks tests/mpi/osu_suite.sh [BENCHMARK...]
#
# OSU_SRC is the top of an OSU 7.x source tree (the one with c/util/osu_util.c). The sources are
# not part of rrt; without OSU_SRC the script exits 77 (automake's "skipped"). Benchmarks whose
# source file is missing from the tree are reported as MISSING and skipped. Programs are compiled
# with -Werror=implicit-function-declaration: a call outside rrt's MPI subset is absent from
# mpi.h, so the program fails to compile (reported, counted as a failure).
#   OSU_CFLAGS    extra compiler flags for both builds (e.g. for a tree mixing OSU versions;
#                 -DCONG_BW=-1 is added by itself when osu_util_graph.c names CONG_BW and
#                 osu_util.h does not define it, as in trees mixing 7.2 and 7.4 utilities)
#   OSU_ITERS     -i (default 100), OSU_WARMUP -x (default 10), OSU_MAXSIZE -m (default 1048576)
#   OSU_TIMEOUT   seconds per run (default 120)
#   OSU_NO_OPENMPI=1  skip the control
# Exit status: 0 when every benchmark built and ran with the expected shape, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${top_srcdir:=$(cd "$here/../.." && pwd)}"
top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=$(cd "$top_srcdir" && pwd)

if [ -z "${OSU_SRC:-}" ]; then
  echo "SKIP: set OSU_SRC to an OSU Micro-Benchmarks 7.x source tree (not shipped with rrt)"
  exit 77
fi
if [ ! -f "$OSU_SRC/c/util/osu_util.c" ] || [ ! -f "$OSU_SRC/c/util/osu_util_mpi.c" ]; then
  echo "SKIP: $OSU_SRC has no c/util/osu_util.c and c/util/osu_util_mpi.c"
  exit 77
fi
[ -x "$top_builddir/rrtmpicc" ] && [ -x "$top_builddir/rrun" ] || {
  echo "FAIL: build the tree first (rrtmpicc, rrun missing in $top_builddir)"
  exit 1
}

if [ -f "$OSU_SRC/c/util/osu_util_graph.c" ] && grep -q CONG_BW "$OSU_SRC/c/util/osu_util_graph.c" &&
  ! grep -q CONG_BW "$OSU_SRC/c/util/osu_util.h"; then
  OSU_CFLAGS="${OSU_CFLAGS:-} -DCONG_BW=-1"
fi
iters=${OSU_ITERS:-100}
warmup=${OSU_WARMUP:-10}
maxsize=${OSU_MAXSIZE:-1048576}
timeout_s=${OSU_TIMEOUT:-120}
work=$top_builddir/tests/mpi/osu
mkdir -p "$work/rrt" "$work/openmpi" "$work/out"

# name  ranks  options beyond -i/-x/-m ("-" none; "nosize": no -m, one row without a size)
benchmarks() {
  cat <<'EOF'
osu_latency 2 -
osu_bw 2 -
osu_bibw 2 -
osu_mbw_mr 2,4 -
osu_multi_lat 2,4 -
osu_latency_mp 2 -
osu_allreduce 2,4 -
osu_bcast 2,4 -
osu_reduce 2,4 -
osu_allgather 2,4 -
osu_alltoall 2,4 -
osu_gather 2,4 -
osu_scatter 2,4 -
osu_reduce_scatter 2,4 -
osu_allgatherv 4 -
osu_alltoallv 4 -
osu_gatherv 4 -
osu_scatterv 4 -
osu_barrier 2,4 nosize
osu_iallreduce 2,4 -
osu_ibcast 2,4 -
osu_ireduce 4 -
osu_iallgather 4 -
osu_ialltoall 4 -
osu_igather 4 -
osu_iscatter 4 -
osu_ireduce_scatter 4 -
osu_ibarrier 2,4 nosize
osu_put_latency 2 -
osu_get_latency 2 -
osu_put_bw 2 -
osu_get_bw 2 -
osu_put_bibw 2 -
osu_acc_latency 2 -
osu_get_acc_latency 2 -
osu_fop_latency 2 nosize
osu_cas_latency 2 nosize
EOF
}

# ---- building ------------------------------------------------------------------------------
# True when $1 is missing or older than any of the other files (rrt's mpi.h counts for every
# rrt-built file: a changed header means rebuilt benchmarks).
stale() {
  local t=$1 f
  shift
  [ -e "$t" ] || return 0
  for f in "$@"; do [ "$f" -nt "$t" ] && return 0; done
  return 1
}
dep() { [ "$1" = rrt ] && echo "$top_srcdir/include/rrt/mpi/mpi.h"; }
util_sources() {
  local f
  for f in osu_util.c osu_util_mpi.c osu_util_graph.c osu_util_papi.c osu_util_validation.c; do
    [ -f "$OSU_SRC/c/util/$f" ] && echo "$OSU_SRC/c/util/$f"
  done
}
# $1: rrt | openmpi, $2: compiler. Builds the utility objects once per flavour.
build_util() {
  local flavour=$1 cc=$2 src obj
  for src in $(util_sources); do
    obj=$work/$flavour/$(basename "$src" .c).o
    stale "$obj" "$src" "$OSU_SRC/c/util/"*.h $(dep "$flavour") || continue
    # shellcheck disable=SC2086 # OSU_CFLAGS: flags, split on purpose
    "$cc" -c -O2 -DPACKAGE_VERSION='"7"' -I"$OSU_SRC/c/util" ${OSU_CFLAGS:-} \
      -Werror=implicit-function-declaration "$src" -o "$obj" >"$obj.log" 2>&1 || {
      echo "FAIL: $flavour: $(basename "$src") does not compile:"
      grep -E "error" "$obj.log" | head -10 | sed 's/^/  | /'
      return 1
    }
  done
}
# $1 flavour, $2 compiler, $3 benchmark name. Prints the binary's path on success.
build_one() {
  local flavour=$1 cc=$2 name=$3 src exe
  src=$(find "$OSU_SRC/c/mpi" -name "$name.c" | sort | head -1)
  [ -n "$src" ] || return 2
  exe=$work/$flavour/$name
  if stale "$exe" "$src" "$OSU_SRC/c/util/"*.h "$work/$flavour/"*.o $(dep "$flavour"); then
    # shellcheck disable=SC2046,SC2086
    "$cc" -O2 -DPACKAGE_VERSION='"7"' -I"$OSU_SRC/c/util" ${OSU_CFLAGS:-} \
      -Werror=implicit-function-declaration "$src" \
      $(for s in $(util_sources); do echo "$work/$flavour/$(basename "$s" .c).o"; done) \
      -lm -lpthread -o "$exe" >"$exe.log" 2>&1 || return 1
  fi
  echo "$exe"
}

# ---- the shape of an output ----------------------------------------------------------------
# Prints the first column of the data rows (the sizes; "-" for rows without one) and fails when
# the header is missing, there are no rows, or a row's last-but-validation number is not a
# positive finite number.
shape() {
  awk -v nosize="$2" '
    /^# OSU MPI/ { header = 1; next }
    /^#/ || /^$/ { next }
    /^[0-9]/ || (nosize && /^ *[0-9.]+/) {
      n = split($0, f, " ")
      v = (nosize ? f[1] : f[2]) + 0
      if (!(v > 0) || v != v || v == "inf") bad = 1
      print (nosize ? "-" : f[1])
      rows++
      next
    }
  END { if (!header || rows == 0 || bad) exit 1 }' "$1"
}

# ---- running -------------------------------------------------------------------------------
export RRT_MPI_INCDIR=$top_srcdir/include/rrt/mpi RRT_MPI_LIBDIR=$top_builddir/.libs
RRTMPICC=$top_builddir/rrtmpicc
MPICC_OMPI=${MPICC_OPENMPI:-$(command -v mpicc.openmpi || true)}
MPIRUN_OMPI=${MPIRUN_OPENMPI:-$(command -v mpirun.openmpi || true)}
openmpi=yes
if [ -n "${OSU_NO_OPENMPI:-}" ] || [ -z "$MPICC_OMPI" ] || [ -z "$MPIRUN_OMPI" ]; then
  openmpi=no
  echo "note: no Open MPI control (OSU_NO_OPENMPI set, or mpicc.openmpi/mpirun.openmpi missing)"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0

build_util rrt "$RRTMPICC" || exit 1
if [ $openmpi = yes ] && ! build_util openmpi "$MPICC_OMPI"; then
  echo "note: the OSU utilities do not build with Open MPI; no control"
  openmpi=no
fi

want=" $* "
failed=0
npass=0
nfail=0
while read -r name nps opts; do
  [ $# -gt 0 ] && [ "${want#* "$name" }" = "$want" ] && continue
  exe=$(build_one rrt "$RRTMPICC" "$name")
  rc=$?
  if [ $rc -eq 2 ]; then
    echo "MISSING $name (no $name.c under $OSU_SRC/c/mpi)"
    continue
  elif [ $rc -ne 0 ]; then
    echo "FAIL $name: does not build with rrtmpicc:"
    grep -E "error|undefined" "$work/rrt/$name.log" | head -10 | sed 's/^/  | /'
    failed=1
    nfail=$((nfail + 1))
    continue
  fi
  ompi_exe=
  [ $openmpi = yes ] && ompi_exe=$(build_one openmpi "$MPICC_OMPI" "$name")
  nosize=0
  args="-i $iters -x $warmup"
  case "$opts" in
    nosize) nosize=1 ;;
    -) args="$args -m $maxsize" ;;
    *) args="$args -m $maxsize $opts" ;;
  esac
  for np in ${nps//,/ }; do
    out=$work/out/$name.$np.rrt
    # shellcheck disable=SC2086 # args: options, split on purpose
    timeout $((timeout_s + 10)) "$top_builddir/rrun" -n "$np" --timeout "$timeout_s" \
      "$exe" $args >"$out" 2>"$out.err" </dev/null
    rc=$?
    if [ $rc -ne 0 ] || ! shape "$out" $nosize >"$out.shape"; then
      echo "FAIL $name -n $np under rrt (exit $rc)"
      sed 's/^/  | /' "$out" "$out.err" | tail -15
      failed=1
      nfail=$((nfail + 1))
      continue
    fi
    verdict="PASS $name -n $np ($(wc -l <"$out.shape") rows)"
    if [ -n "$ompi_exe" ]; then
      oout=$work/out/$name.$np.openmpi
      # shellcheck disable=SC2086
      timeout $((timeout_s + 10)) "$MPIRUN_OMPI" --oversubscribe -n "$np" "$ompi_exe" $args \
        >"$oout" 2>"$oout.err" </dev/null
      if [ $? -ne 0 ] || ! shape "$oout" $nosize >"$oout.shape"; then
        verdict="$verdict; Open MPI control did not run cleanly (see $oout.err)"
      elif ! cmp -s "$out.shape" "$oout.shape"; then
        echo "FAIL $name -n $np: rows differ from Open MPI's"
        diff "$oout.shape" "$out.shape" | head -10 | sed 's/^/  | /'
        failed=1
        nfail=$((nfail + 1))
        continue
      else
        verdict="$verdict, same rows as Open MPI"
      fi
    fi
    echo "$verdict"
    npass=$((npass + 1))
  done
done < <(benchmarks)
echo "$npass passed, $nfail failed"
exit $failed

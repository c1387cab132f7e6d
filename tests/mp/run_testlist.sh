#!/bin/bash
# Runs declarative multi-process test lists (MPICH testlist style).
#
#   run_testlist.sh [-v] [-k REGEX] LIST...
#
# One test per line:  NAME NPROCS [VAR=VALUE ...] [arg=ARG ...] [launcher=rrun|none|ompi|srun] [timeout=S]
#   NAME      a program built as $top_builddir/tests/mp/NAME
#   VAR=VALUE environment for the ranks (upper-case names, e.g. RRT_EAGER_LIMIT=4096)
#   arg=ARG   one program argument (repeatable)
#   launcher  rrun (default): $top_builddir/rrun -n NPROCS --timeout S
#             none: the program run directly as a world of one, launcher variables removed
#             ompi: mpirun.openmpi --allow-run-as-root --oversubscribe -n NPROCS (skipped if absent)
#             srun: $MP_SRUN --mpi=pmix -n NPROCS (Slurm; the ranks inherit the environment)
#   timeout   seconds for this line (default $MP_TIMEOUT or 120)
# Environment: MP_LAUNCHER, the launcher of lines that name none (default rrun); MP_OMPI, the
# command (words split at blanks) that launcher=ompi runs instead of
# "mpirun.openmpi --allow-run-as-root --oversubscribe" (tests/multihost/ puts mpirun inside a
# network namespace with it); MP_SRUN, the srun command of launcher=srun (default "srun").
# '#' starts a comment. A line passes when the launcher exits 0, the output has exactly one
# "PASS NAME (NPROCS ranks)" line (so N singletons cannot pass for one job) and no line
# starting with "FAIL". It is skipped when the program printed "SKIP NAME: reason" and exited
# 0, or when mpirun.openmpi is absent (ompi). Prints "N passed, N failed, N skipped";
# exits 1 on any failure, 77 when everything was skipped, else 0.
# -v prints every test's output; -k runs only lines whose text matches REGEX.
set -u

here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$(cd "$here/../.." && pwd)}"
: "${MP_TIMEOUT:=120}"
: "${MP_LAUNCHER:=rrun}"
: "${MP_OMPI:=mpirun.openmpi --allow-run-as-root --oversubscribe}"
: "${MP_SRUN:=srun}"
verbose=0
filter=
while getopts "vk:" opt; do
  case $opt in
    v) verbose=1 ;;
    k) filter=$OPTARG ;;
    *) echo "usage: $0 [-v] [-k REGEX] LIST..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-v] [-k REGEX] LIST..." >&2; exit 2; }

passed=0 failed=0 skipped=0
failed_lines=()
out=$(mktemp "${TMPDIR:-/tmp}/rrt-mp.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

# Variables a launcher leaves behind; a singleton run must not see them.
launcher_vars() { env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\|OMPI_[A-Za-z0-9_]*\|PMI_[A-Za-z0-9_]*\)=.*/\1/p'; }

run_line() {
  local list=$1 lineno=$2 line=$3
  local -a words envs args ompi_x unset_args
  read -r -a words <<<"$line"
  local name=${words[0]} np=${words[1]:-} launcher=$MP_LAUNCHER tmo=$MP_TIMEOUT w
  envs=() args=() ompi_x=() unset_args=()
  for w in "${words[@]:2}"; do
    case $w in
      arg=*) args+=("${w#arg=}") ;;
      launcher=*) launcher=${w#launcher=} ;;
      timeout=*) tmo=${w#timeout=} ;;
      [A-Z]*=*) envs+=("$w"); ompi_x+=(-x "${w%%=*}") ;;
      *) echo "FAIL: $list:$lineno: cannot parse '$w'"; return 1 ;;
    esac
  done
  local label="$name $np${envs[*]:+ ${envs[*]}}${args[*]:+ ${args[*]}}"
  [ "$launcher" = rrun ] || label="$label [$launcher]"
  local prog="$top_builddir/tests/mp/$name"
  if ! [[ $np =~ ^[0-9]+$ ]]; then echo "FAIL: $list:$lineno: bad rank count '$np'"; return 1; fi
  if [ ! -x "$prog" ]; then echo "FAIL: $label: $prog is not built (make check builds it)"; return 1; fi

  local -a cmd
  case $launcher in
    rrun)
      if [ ! -x "$top_builddir/rrun" ]; then echo "FAIL: $label: $top_builddir/rrun is not built"; return 1; fi
      cmd=(env "${envs[@]}" "$top_builddir/rrun" -n "$np" --timeout "$tmo" "$prog" "${args[@]}") ;;
    none)
      for w in $(launcher_vars); do unset_args+=(-u "$w"); done
      cmd=(env "${unset_args[@]}" "${envs[@]}" "$prog" "${args[@]}") ;;
    ompi)
      if ! command -v mpirun.openmpi >/dev/null 2>&1; then
        echo "SKIP: $label: mpirun.openmpi not found (Debian: apt-get install openmpi-bin)"
        return 77
      fi
      local -a ompi
      read -r -a ompi <<<"$MP_OMPI"
      cmd=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "${envs[@]}"
           "${ompi[@]}" -n "$np" "${ompi_x[@]}" "$prog" "${args[@]}") ;;
    srun)
      local -a srun
      read -r -a srun <<<"$MP_SRUN"
      cmd=(env "${envs[@]}" "${srun[@]}" --mpi=pmix -n "$np" "$prog" "${args[@]}") ;;
    *) echo "FAIL: $list:$lineno: unknown launcher '$launcher'"; return 1 ;;
  esac

  local start=$SECONDS rc
  # The outer timeout is a backstop in case the launcher itself hangs.
  timeout -k 10 $((tmo + 30)) "${cmd[@]}" >"$out" 2>&1 </dev/null
  rc=$?
  local secs=$((SECONDS - start)) why=
  # A program may decline to run ("SKIP NAME: reason" and exit 0), e.g. when a part of rrt it
  # needs is not built yet.
  if [ $rc -eq 0 ] && grep -q "^SKIP $name\\b" "$out" && ! grep -q '^FAIL' "$out"; then
    echo "SKIP: $label: $(grep -m1 "^SKIP $name" "$out" | sed "s/^SKIP $name:* *//")"
    return 77
  fi
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why="timed out after ${secs}s"
  elif [ $rc -ne 0 ]; then why="exit code $rc"
  elif grep -q '^FAIL' "$out"; then why="a rank reported FAIL"
  elif ! grep -q "^PASS $name\\b" "$out"; then why="no 'PASS $name' line in the output"
  # Exactly one verdict, for the whole world: N separate singletons would print N lines.
  elif [ "$(grep -c "^PASS $name\\b" "$out")" != 1 ] || ! grep -q "^PASS $name ($np ranks)" "$out"; then
    why="want one 'PASS $name ($np ranks)' line, got: $(grep "^PASS $name" "$out" | sort | uniq -c | tr -s ' \n' ' ')"
  fi
  if [ -z "$why" ]; then
    echo "PASS: $label (${secs}s)"
    [ $verbose -eq 1 ] && sed 's/^/    /' "$out"
    return 0
  fi
  echo "FAIL: $label: $why"
  echo "    command: ${cmd[*]}"
  if [ $verbose -eq 1 ]; then sed 's/^/    /' "$out"; else tail -n 40 "$out" | sed 's/^/    /'; fi
  return 1
}

for list in "$@"; do
  [ -r "$list" ] || { echo "FAIL: cannot read list $list"; failed=$((failed + 1)); continue; }
  lineno=0
  while IFS= read -r raw || [ -n "$raw" ]; do
    lineno=$((lineno + 1))
    line=${raw%%#*}
    [[ $line =~ [^[:space:]] ]] || continue
    if [ -n "$filter" ] && ! [[ $line =~ $filter ]]; then continue; fi
    run_line "$list" "$lineno" "$line"
    case $? in
      0) passed=$((passed + 1)) ;;
      77) skipped=$((skipped + 1)) ;;
      *) failed=$((failed + 1)); failed_lines+=("$(basename "$list"):$lineno: $line") ;;
    esac
  done <"$list"
done

echo "$passed passed, $failed failed, $skipped skipped"
if [ $failed -gt 0 ]; then
  echo "failed:"
  printf '    %s\n' "${failed_lines[@]}"
  exit 1
fi
[ $passed -eq 0 ] && [ $skipped -gt 0 ] && exit 77
exit 0

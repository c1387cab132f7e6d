# Shared helpers for the rrun test scripts (sourced). Requires bash.
# Exit codes: 0 pass, 1 fail, 77 skip. Each helper prints what it checked.

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
RRUN="$top_builddir/rrun"
PROBE="$top_builddir/tests/launcher/probe"
[ -x "$RRUN" ] || { echo "SKIP: $RRUN not built"; exit 77; }
[ -x "$PROBE" ] || { echo "SKIP: $PROBE not built"; exit 77; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rrun-test.XXXXXX")
# A token unique to this script run, placed in ranks' argv so pgrep finds exactly our ranks.
TOKEN="tok$$x$RANDOM"
FAILED=0
cleanup_work() {
  pkill -KILL -f "^$PROBE .*$TOKEN" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup_work EXIT

pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILED=1; }
finish() { [ "$FAILED" = 0 ] && { echo "all passed"; exit 0; }; exit 1; }

# now_ms: monotonic-enough wall clock in milliseconds.
now_ms() { date +%s%3N; }

# run_rrun OUTFILE ERRFILE args...: runs rrun (bounded by timeout(1) so a hang is a failure),
# sets RC and ELAPSED_MS.
run_rrun() {
  local out=$1 err=$2
  shift 2
  local t0
  t0=$(now_ms)
  timeout -k 2 30 "$RRUN" "$@" >"$out" 2>"$err" </dev/null
  RC=$?
  ELAPSED_MS=$(( $(now_ms) - t0 ))
}

# expect_rc WHAT WANT: compares RC.
expect_rc() {
  if [ "$RC" = "$2" ]; then pass "$1: exit $RC"; else fail "$1: exit $RC, want $2"; fi
}

# expect_grep WHAT PATTERN FILE: the file contains a line matching PATTERN (extended regex).
expect_grep() {
  if grep -Eq -- "$2" "$3"; then pass "$1"; else fail "$1: no '$2' in $3:"; sed 's/^/  | /' "$3"; fi
}

expect_no_grep() {
  if grep -Eq -- "$2" "$3"; then fail "$1: unexpected '$2' in $3:"; sed 's/^/  | /' "$3"; else pass "$1"; fi
}

# our_ranks: pids of live (non-zombie) probe processes carrying this run's token.
our_ranks() {
  local pid
  for pid in $(pgrep -f "^$PROBE .*$TOKEN"); do
    [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] || echo "$pid"
  done
}

# wait_no_ranks WHAT SECONDS: polls until no rank of ours survives.
wait_no_ranks() {
  local deadline=$(( $(now_ms) + $2 * 1000 ))
  while [ -n "$(our_ranks)" ]; do
    if [ "$(now_ms)" -gt "$deadline" ]; then
      fail "$1: ranks still alive after $2 s: $(our_ranks | tr '\n' ' ')"
      return 1
    fi
    sleep 0.05
  done
  pass "$1: no rank left"
}

# wait_for_file PATH SECONDS
wait_for_file() {
  local deadline=$(( $(now_ms) + $2 * 1000 ))
  while [ ! -e "$1" ]; do
    [ "$(now_ms)" -gt "$deadline" ] && return 1
    sleep 0.02
  done
  return 0
}

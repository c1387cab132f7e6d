#!/bin/bash
# Runs every libFuzzer target of a --enable-fuzzing build for a bounded time (CI):
#   tests/fuzz/run_fuzzers.sh BUILDDIR [SECONDS_PER_TARGET]   (default 45)
# FUZZ_JOBS=N runs N targets at a time (default 1; CI runs 2 on its 2 cores: each target is one
# process fuzzing on one core, so the total time is the per-target time times targets / N).
# Each target starts from its corpus in the tree (read-only: new inputs go to a scratch
# folder) and stops after the time; a crash, leak, timeout or out-of-memory fails the run and
# leaves the input in BUILDDIR/fuzz-artifacts/ (add it to tests/fuzz/corpus/<target>/ as
# crash-<what> once fixed). Prints executions per target from libFuzzer's final stats. The
# targets are the folders of tests/fuzz/corpus/ (FUZZ_TARGETS="a b" picks some); fuzz_verbs_*
# run over the software RDMA device and only in a build with verbs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run_fuzzers.sh BUILDDIR [SECONDS]}" && pwd)
secs=${2:-45}
art="$build/fuzz-artifacts"
mkdir -p "$art"
jobs=${FUZZ_JOBS:-1}
targets=${FUZZ_TARGETS:-$(cd "$here/corpus" && ls)}

fuzz_one() {  # fuzz_one TARGET: fuzzes it, writes its one-line verdict to $art/TARGET.verdict
  local t=$1 bin="$build/tests/fuzz/$1" envs=() scratch log rc execs
  local verdict="$art/$t.verdict"
  case $t in
    fuzz_verbs_*)
      grep -q '^#define RRT_HAVE_VERBS 1' "$build/rrt_config.h" ||
        { echo "skip: $t (built without verbs)" >"$verdict"; return 0; }
      envs=(LD_LIBRARY_PATH="$build/tests/softrdma/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") ;;
  esac
  [ -x "$bin" ] || { echo "FAIL: $bin not built (configure --enable-fuzzing, make check)" >"$verdict"; return 1; }
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/rrt-fuzz-$t.XXXXXX")
  log="$art/$t.log"
  # -timeout: one input may take at most 10 s (a hang is a finding); -rss_limit_mb bounds memory.
  timeout -k 10 $(( secs + 120 )) env "${envs[@]}" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/$t-" "$scratch" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    echo "ok: $t: ${execs:-?} executions in ${secs} s, corpus $(ls "$here/corpus/$t" | wc -l) + $(ls "$scratch" | wc -l) new, no crash" >"$verdict"
  else
    { echo "FAIL: $t (exit $rc) after ${execs:-?} executions; input in $art:"
      grep -E 'ERROR|SUMMARY|fuzz check failed|#[0-9]+ 0x' "$log" | head -30; } >"$verdict"
  fi
  rm -rf "$scratch"
  return "$rc"
}

running=0
for t in $targets; do
  rm -f "$art/$t.verdict"
  fuzz_one "$t" &
  running=$(( running + 1 ))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$(( running - 1 ))
  fi
done
wait
# Verdicts in target order; the run fails when any target failed or left none.
status=0
for t in $targets; do
  if [ -f "$art/$t.verdict" ]; then
    cat "$art/$t.verdict"
    grep -q '^FAIL' "$art/$t.verdict" && status=1
  else
    echo "FAIL: $t left no verdict"; status=1
  fi
done
exit $status

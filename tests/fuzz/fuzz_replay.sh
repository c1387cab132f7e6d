#!/bin/bash
# make check: every fuzz target runs once on every input of its corpus (tests/fuzz/corpus/
# <target>/: seeds, and the input of every crash ever found, kept as regression tests). Works
# with both builds of the targets: the plain replay program and libFuzzer (given files, it runs
# each once). Fails when a target crashes or its corpus is missing.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
status=0
for t in fuzz_engine_am fuzz_shm_ring fuzz_shm_connect fuzz_config fuzz_rrun_options; do
  bin="$top_builddir/tests/fuzz/$t"
  dir="$top_srcdir/tests/fuzz/corpus/$t"
  [ -x "$bin" ] || { echo "FAIL: $bin is not built"; status=1; continue; }
  files=("$dir"/*)
  [ -e "${files[0]}" ] || { echo "FAIL: no corpus in $dir"; status=1; continue; }
  if out=$("$bin" "${files[@]}" 2>&1); then
    echo "ok: $t: ${#files[@]} inputs"
  else
    echo "FAIL: $t crashed on its corpus:"
    printf '%s\n' "$out" | tail -40
    status=1
  fi
done
exit $status

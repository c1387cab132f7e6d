#!/bin/bash
# make check: every fuzz target runs once on every input of its corpus (tests/fuzz/corpus/
# <target>/: seeds, and the input of every crash ever found, kept as regression tests). Works
# with both builds of the targets: the plain replay program and libFuzzer (given files, it runs
# each once). The targets are the folders of the corpus; fuzz_verbs_* run over the software RDMA
# device and only in a build with verbs. Fails when a target crashes or is not built.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
status=0
for dir in "$top_srcdir"/tests/fuzz/corpus/*/; do
  dir=${dir%/}
  t=${dir##*/}
  bin="$top_builddir/tests/fuzz/$t"
  envs=()
  case $t in
    fuzz_verbs_*)
      grep -q '^#define RRT_HAVE_VERBS 1' "$top_builddir/rrt_config.h" ||
        { echo "skip: $t (built without verbs)"; continue; }
      envs=(LD_LIBRARY_PATH="$top_builddir/tests/softrdma/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") ;;
  esac
  [ -x "$bin" ] || { echo "FAIL: $bin is not built"; status=1; continue; }
  files=("$dir"/*)
  [ -e "${files[0]}" ] || { echo "FAIL: no corpus in $dir"; status=1; continue; }
  if out=$(env "${envs[@]}" "$bin" "${files[@]}" 2>&1); then
    echo "ok: $t: ${#files[@]} inputs"
  else
    echo "FAIL: $t crashed on its corpus:"
    printf '%s\n' "$out" | tail -40
    status=1
  fi
done
exit $status

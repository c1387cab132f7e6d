#!/bin/bash
# rrun: jobs of 1, 2, 4 and 8 ranks that all succeed; job/node keys and the fence + modex exchange.
set -u
. "$(dirname "$0")/lib.sh"

for n in 1 2 4 8; do
  run_rrun "$WORK/out" "$WORK/err" -n $n "$PROBE" --info --modex "$TOKEN"
  expect_rc "$n ranks" 0
  want_peers=$(seq -s, 0 $((n - 1)))
  for ((r = 0; r < n; r++)); do
    expect_grep "$n ranks: rank $r keys" \
      "^rank $r size $n local_size $n peers $want_peers nodeid 0 ns rrun-[0-9]+-[0-9a-f]{8}\$" "$WORK/out"
    expect_grep "$n ranks: rank $r modex" "^rank $r modex ok with $n ranks\$" "$WORK/out"
  done
  [ "$(wc -l <"$WORK/out")" -eq $((2 * n)) ] && pass "$n ranks: line count" || fail "$n ranks: line count"
  [ ! -s "$WORK/err" ] && pass "$n ranks: quiet stderr" || { fail "$n ranks: stderr"; cat "$WORK/err"; }
done

# Each job gets its own namespace.
ns1=$("$RRUN" -n 1 "$PROBE" --info | awk '{print $NF}')
ns2=$("$RRUN" -n 1 "$PROBE" --info | awk '{print $NF}')
[ -n "$ns1" ] && [ "$ns1" != "$ns2" ] && pass "unique namespaces" || fail "namespaces '$ns1' '$ns2'"

# Programs that never talk to PMIx run too (searched in PATH like execvp).
run_rrun "$WORK/out" "$WORK/err" -n 3 echo hello
expect_rc "non-PMIx program" 0
[ "$(grep -c '^hello$' "$WORK/out")" = 3 ] && pass "non-PMIx output" || fail "non-PMIx output"

# A rank that exits 0 early is not a failure.
run_rrun "$WORK/out" "$WORK/err" -n 3 "$PROBE" --exit 1:0 --sleep 0.3 "$TOKEN"
expect_rc "early exit 0" 0

# --bind-to core: rank i on the i-th usable core (mod the count); default (auto): bound like
# core when ranks <= cores, unbound when oversubscribed; --bind-to none: unbound.
cpus=($(taskset -pc $$ 2>/dev/null | sed 's/.*: //' | tr ',' '\n' | while IFS=- read a b; do seq "$a" "${b:-$a}"; done))
smt=0  # with hardware threads a core is several CPUs; the exact lists below assume one
for c in "${cpus[@]}"; do
  f=/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list
  [ -r "$f" ] && [ "$(cat "$f")" != "$c" ] && smt=1
done
if [ "${#cpus[@]}" -gt 0 ] && [ "$smt" = 0 ]; then
  # one hardware thread per core here, so a core is one CPU
  n=${#cpus[@]}
  run_rrun "$WORK/out" "$WORK/err" -n $((n + 1)) --bind-to core "$PROBE" --affinity
  expect_rc "bind-to core" 0
  for r in $(seq 0 "$n"); do
    expect_grep "rank $r bound" "^rank $r cpus ${cpus[$((r % n))]}\$" "$WORK/out"
  done
  all=$(IFS=,; echo "${cpus[*]}")
  run_rrun "$WORK/out" "$WORK/err" -n "$n" "$PROBE" --affinity
  expect_grep "bound by default when ranks <= cores" "^rank $((n - 1)) cpus ${cpus[$((n - 1))]}\$" "$WORK/out"
  run_rrun "$WORK/out" "$WORK/err" -n $((n + 1)) "$PROBE" --affinity
  expect_grep "unbound by default when oversubscribed" "^rank $n cpus $all\$" "$WORK/out"
  run_rrun "$WORK/out" "$WORK/err" -n 1 --bind-to none "$PROBE" --affinity
  expect_grep "unbound with --bind-to none" "^rank 0 cpus $all\$" "$WORK/out"
fi
finish

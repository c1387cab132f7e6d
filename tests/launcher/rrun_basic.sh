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

# --bind-to core: rank i on the i-th usable CPU (mod the count); default: no binding.
cpus=($(taskset -pc $$ 2>/dev/null | sed 's/.*: //' | tr ',' '\n' | while IFS=- read a b; do seq "$a" "${b:-$a}"; done))
if [ "${#cpus[@]}" -gt 0 ]; then
  run_rrun "$WORK/out" "$WORK/err" -n 3 --bind-to core "$PROBE" --affinity
  expect_rc "bind-to core" 0
  for r in 0 1 2; do
    expect_grep "rank $r bound" "^rank $r cpus ${cpus[$((r % ${#cpus[@]}))]}\$" "$WORK/out"
  done
  all=$(IFS=,; echo "${cpus[*]}")
  run_rrun "$WORK/out" "$WORK/err" -n 2 "$PROBE" --affinity
  expect_grep "unbound by default" "^rank 1 cpus $all\$" "$WORK/out"
fi
finish

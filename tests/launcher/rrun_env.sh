#!/bin/bash
# rrun: the ranks' environment: -x / --env, stale PMIX_* from an outer job removed, PMIX_MCA_*
# kept, PMIX_MCA_gds=hash by default.
set -u
. "$(dirname "$0")/lib.sh"

export RRUN_TEST_PASS=passed-through
# A stale outer PMIx job: clients would fail or hang on these if rrun passed them on.
export PMIX_NAMESPACE=stale-outer-job PMIX_RANK=5 PMIX_SERVER_URI41="stale;tcp4://127.0.0.1:1"
export PMIX_MCA_rrun_test=kept
run_rrun "$WORK/out" "$WORK/err" -n 2 -x RRUN_TEST_PASS --env RRUN_TEST_SET=set-value \
  -x RRUN_TEST_X=x-value "$PROBE" --env RRUN_TEST_PASS --env RRUN_TEST_SET --env RRUN_TEST_X \
  --env PMIX_MCA_rrun_test --env PMIX_MCA_gds --env PMIX_SERVER_URI41 --info "$TOKEN"
expect_rc "env job" 0
for r in 0 1; do
  expect_grep "rank $r -x" "^rank $r env RRUN_TEST_PASS=passed-through\$" "$WORK/out"
  expect_grep "rank $r --env" "^rank $r env RRUN_TEST_SET=set-value\$" "$WORK/out"
  expect_grep "rank $r -x VAR=VALUE" "^rank $r env RRUN_TEST_X=x-value\$" "$WORK/out"
  expect_grep "rank $r PMIX_MCA kept" "^rank $r env PMIX_MCA_rrun_test=kept\$" "$WORK/out"
  expect_grep "rank $r gds=hash" "^rank $r env PMIX_MCA_gds=hash\$" "$WORK/out"
  expect_grep "rank $r fresh server URI" "^rank $r env PMIX_SERVER_URI41=pmix-server" "$WORK/out"
  expect_no_grep "rank $r stale URI gone" "stale" "$WORK/out"
  expect_grep "rank $r own namespace" "^rank $r size 2 .* ns rrun-[0-9]+-[0-9a-f]{8}\$" "$WORK/out"
done

# A user choice of PMIX_MCA_gds is respected.
PMIX_MCA_gds=hash,ds12 run_rrun "$WORK/out" "$WORK/err" -n 1 "$PROBE" --env PMIX_MCA_gds "$TOKEN"
expect_grep "user gds" "^rank 0 env PMIX_MCA_gds=hash,ds12\$" "$WORK/out"
finish

#!/bin/sh
# make check entry: runs tests/mp/testlist (see run_testlist.sh for the format).
d=${top_srcdir:-$(dirname "$0")/../..}/tests/mp
exec "$d/run_testlist.sh" "$d/testlist"

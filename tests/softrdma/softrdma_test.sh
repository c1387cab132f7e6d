#!/bin/sh
# The software RDMA device's own two-process test (tests/softrdma/softrdma_test.cc).
. "$top_srcdir/tests/softrdma/env.sh" "$top_builddir" || exit 99
exec timeout 120 "$top_builddir/tests/softrdma/softrdma_test"

#!/bin/sh
# make check entry: tests/unit/verbs_test (the verbs transport between forked processes) over
# the software RDMA device.
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
softrdma_lib=$(cd "$top_builddir/tests/softrdma/lib" 2>/dev/null && pwd)
if [ -z "$softrdma_lib" ] || [ ! -f "$softrdma_lib/libibverbs.so.1" ]; then
  echo "FAIL: the software RDMA device is not built (make softrdma)"; exit 99
fi
LD_LIBRARY_PATH="$softrdma_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$top_builddir/tests/unit/verbs_test" "$@"

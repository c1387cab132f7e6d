# Source this to run verbs programs over the software RDMA device instead of real hardware:
#   . tests/softrdma/env.sh [builddir]     ($top_builddir when set, else builddir, else .)
# $top_builddir goes first: a POSIX sh "." passes no arguments, so $1 would be the sourcing
# script's own first argument.
# Programs linked against Debian's libibverbs bind to tests/softrdma/lib/libibverbs.so.1.
softrdma_builddir=${top_builddir:-${1:-.}}
softrdma_libdir=$(cd "$softrdma_builddir/tests/softrdma/lib" 2>/dev/null && pwd)
if [ -z "$softrdma_libdir" ] || [ ! -f "$softrdma_libdir/libibverbs.so.1" ]; then
  echo "softrdma: $softrdma_builddir/tests/softrdma/lib/libibverbs.so.1 not built (make softrdma)" >&2
  return 1 2>/dev/null || exit 1
fi
export LD_LIBRARY_PATH="$softrdma_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset softrdma_builddir softrdma_libdir

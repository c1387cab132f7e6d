// The reduction kernels built for AVX2 and F16C (runtime/coll/local.mk adds -mavx2 -mf16c):
// 256-bit loops, and float16 converted by the CPU. kernels.cc calls this table only where the
// CPU has both (x86-64 from Haswell and Zen on); the baseline build serves the rest.
#include "runtime/coll/kernel_loops.h"

namespace rrt::coll {

Kernel kernelTableAvx2(rrt_op_t op, rrt_datatype_t t) { return kernelTable(op, t); }

}  // namespace rrt::coll

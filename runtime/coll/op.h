// Reduction operations: the predefined ops of rrt.h and user ops (rrt_op_create), and the
// local reduction "inout[i] = in[i] op inout[i]" the collective algorithms apply.
//
// Validity follows MPI's table, widened where rrt.h says so:
//   sum, prod          integers (CHAR as int8, BYTE as uint8), float, double, long double,
//                      float16, bfloat16, float/double complex
//   min, max           integers, CHAR, BYTE, real floating types (not complex)
//   land, lor, lxor    integers, CHAR, bool
//   band, bor, bxor    integers, CHAR, BYTE
//   minloc, maxloc     the (value, index) pair types
//   user ops           any type
// Anything else is ErrOp. float16 / bfloat16 are widened to float, combined in float, and
// rounded back once per combining step (round to nearest even), as NCCL does.
//
// Handles: predefined ops are 0..RRT_PREDEFINED_OP_COUNT-1; user ops start at kFirstUserOp and
// freed handles are reused. Single-threaded like the rest of rrt.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rrt/rrt.h>

#include "runtime/core/status.h"

namespace rrt::coll {

constexpr rrt_op_t kFirstUserOp = 32;

// inout[i] = in[i] op inout[i] over n base elements. Kernels take no aliasing between in and
// inout (the algorithms never alias them).
using Kernel = void (*)(const void* in, void* inout, size_t n);

// A resolved (op, datatype) pair: what a collective keeps for its whole life.
struct Reducer {
  Kernel kernel = nullptr;            // predefined op: element-wise on base elements
  rrt_user_function* user = nullptr;  // user op: called with count elements of type
  void* userData = nullptr;
  rrt_datatype_t type = RRT_DATATYPE_NULL;  // the datatype the collective was called with
  size_t baseCount = 1;               // base elements per element of type
  rrt_op_t op = RRT_OP_NULL;          // predefined op (device kernels are looked up by it)
  rrt_datatype_t baseType = RRT_DATATYPE_NULL;  // base type of type (predefined op)
  bool commutative = true;

  // inout = in op inout over count elements of type.
  void apply(const void* in, void* inout, size_t count) const {
    if (count == 0) return;
    if (kernel) {
      kernel(in, inout, count * baseCount);
    } else {
      user(in, inout, count, type, userData);
    }
  }
};

// The kernel of a predefined op on a predefined (base) type; nullptr when the op is not
// defined on that type. From the widest build of the kernels the CPU runs (kernelIsa).
Kernel kernelFor(rrt_op_t op, rrt_datatype_t baseType);

// The builds of the kernels: the architecture's baseline, and on x86-64 one for AVX2 + F16C
// (the same loops 256 bits wide, float16 converted by the CPU). They give the same bits for
// every input but NaN payloads.
enum class KernelIsa { Baseline, Avx2 };
// The build kernelFor uses: the widest the CPU runs, or RRT_KERNELS (auto, baseline, avx2).
KernelIsa kernelIsa();
const char* kernelIsaName(KernelIsa isa);
// The kernel from one build; nullptr also when that build is absent or the CPU cannot run it.
Kernel kernelFor(KernelIsa isa, rrt_op_t op, rrt_datatype_t baseType);

// Resolves op on type: Ok, ErrOp (unknown op or not defined on the type) or ErrType.
Status makeReducer(rrt_op_t op, rrt_datatype_t type, Reducer* out);

// True when op is a valid handle (predefined or live user op).
bool opValid(rrt_op_t op);
bool opCommutative(rrt_op_t op);
const char* opName(rrt_op_t op);

Status opCreate(rrt_user_function* fn, void* userData, bool commutative, rrt_op_t* op);
Status opFree(rrt_op_t* op);

// ---- float16 / bfloat16 conversion (exposed for the tests) ---------------------------------
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);      // round to nearest even; NaN stays NaN (quiet)
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);      // round to nearest even; NaN stays NaN (quiet)

}  // namespace rrt::coll

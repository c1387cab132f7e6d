// Device reductions: inout[i] = in[i] op inout[i], one kernel per (op, datatype) that rrt.h's op
// table allows (runtime/coll/op.h), with the host kernels' semantics (runtime/coll/kernels.cc):
// integers wrap, float16 / bfloat16 are combined in float and rounded to nearest even once per
// step, minloc/maxloc take the smaller index on a tie. Not on the device: long double and its
// pair type (no device long double).
//
// Built by nvcc into a fatbin (SASS for a few architectures + PTX for the rest), embedded in the
// library and loaded with cuModuleLoadData through the dlopen'ed driver (cuda_driver.cc): the
// library links neither libcuda nor the CUDA runtime. Kernels are looked up by name:
// rrt_reduce_o<op>_t<datatype>, with the numbers of rrt.h's enums.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

typedef unsigned long long u64;

template <typename T> struct Wide { typedef T type; };
template <> struct Wide<int8_t> { typedef uint32_t type; };
template <> struct Wide<uint8_t> { typedef uint32_t type; };
template <> struct Wide<int16_t> { typedef uint32_t type; };
template <> struct Wide<uint16_t> { typedef uint32_t type; };
template <> struct Wide<int32_t> { typedef uint32_t type; };
template <> struct Wide<uint32_t> { typedef uint32_t type; };
template <> struct Wide<int64_t> { typedef uint64_t type; };
template <> struct Wide<uint64_t> { typedef uint64_t type; };

struct Sum { template <typename T> __device__ static T f(T a, T b) {
  typedef typename Wide<T>::type W; return (T)((W)a + (W)b); } };
struct Prod { template <typename T> __device__ static T f(T a, T b) {
  typedef typename Wide<T>::type W; return (T)((W)a * (W)b); } };
struct Min { template <typename T> __device__ static T f(T a, T b) { return a < b ? a : b; } };
struct Max { template <typename T> __device__ static T f(T a, T b) { return a > b ? a : b; } };
struct Land { template <typename T> __device__ static T f(T a, T b) { return (T)((a != 0) & (b != 0)); } };
struct Lor { template <typename T> __device__ static T f(T a, T b) { return (T)((a != 0) | (b != 0)); } };
struct Lxor { template <typename T> __device__ static T f(T a, T b) { return (T)((a != 0) ^ (b != 0)); } };
struct Band { template <typename T> __device__ static T f(T a, T b) { return (T)(a & b); } };
struct Bor { template <typename T> __device__ static T f(T a, T b) { return (T)(a | b); } };
struct Bxor { template <typename T> __device__ static T f(T a, T b) { return (T)(a ^ b); } };

#define RRT_GRID_LOOP(n) \
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (n); i += (u64)gridDim.x * blockDim.x)

template <typename Op, typename T>
__device__ void plain(const void* in, void* inout, u64 n) {
  const T* a = (const T*)in;
  T* b = (T*)inout;
  RRT_GRID_LOOP(n) b[i] = Op::f(a[i], b[i]);
}

template <typename Op>
__device__ void halfK(const void* in, void* inout, u64 n) {
  const __half* a = (const __half*)in;
  __half* b = (__half*)inout;
  RRT_GRID_LOOP(n) b[i] = __float2half_rn(Op::f(__half2float(a[i]), __half2float(b[i])));
}

template <typename Op>
__device__ void bfloat(const void* in, void* inout, u64 n) {
  const __nv_bfloat16* a = (const __nv_bfloat16*)in;
  __nv_bfloat16* b = (__nv_bfloat16*)inout;
  RRT_GRID_LOOP(n) b[i] = __float2bfloat16_rn(Op::f(__bfloat162float(a[i]), __bfloat162float(b[i])));
}

template <typename R>
__device__ void complexProd(const void* in, void* inout, u64 n) {
  const R* a = (const R*)in;
  R* b = (R*)inout;
  RRT_GRID_LOOP(n) {
    const R ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    b[2 * i] = ar * br - ai * bi;
    b[2 * i + 1] = ar * bi + ai * br;
  }
}

template <typename R>
__device__ void complexSum(const void* in, void* inout, u64 n) {
  const R* a = (const R*)in;
  R* b = (R*)inout;
  RRT_GRID_LOOP(2 * n) b[i] = a[i] + b[i];
}

template <typename V> struct Pair { V v; int i; };

template <typename V, bool kMax>
__device__ void loc(const void* in, void* inout, u64 n) {
  const Pair<V>* a = (const Pair<V>*)in;
  Pair<V>* b = (Pair<V>*)inout;
  RRT_GRID_LOOP(n) {
    const bool better = kMax ? a[i].v > b[i].v : a[i].v < b[i].v;
    const bool tie = a[i].v == b[i].v;
    const int idx = tie ? (a[i].i < b[i].i ? a[i].i : b[i].i) : (better ? a[i].i : b[i].i);
    b[i].v = better ? a[i].v : b[i].v;
    b[i].i = idx;
  }
}

// One kernel: rrt_reduce_o<OP>_t<TYPE> running BODY.
#define K(OP, TYPE, BODY) \
  extern "C" __global__ void rrt_reduce_o##OP##_t##TYPE(const void* in, void* inout, u64 n) { BODY(in, inout, n); }

// Datatype numbers (rrt.h): BYTE 0, CHAR 1, INT8 2, INT16 3, INT32 4, INT64 5, UINT8 6, UINT16 7,
// UINT32 8, UINT64 9, FLOAT 10, DOUBLE 11, FLOAT16 12, BFLOAT16 13, BOOL 15, C_FLOAT_COMPLEX 16,
// C_DOUBLE_COMPLEX 17, FLOAT_INT 18, DOUBLE_INT 19, LONG_INT 20, 2INT 21, SHORT_INT 22.
// Ops: SUM 0, PROD 1, MIN 2, MAX 3, LAND 4, LOR 5, LXOR 6, BAND 7, BOR 8, BXOR 9, MINLOC 10,
// MAXLOC 11.
#define INTS(OP, OPT)                                                                  \
  K(OP, 1, (plain<OPT, int8_t>)) K(OP, 2, (plain<OPT, int8_t>))                        \
  K(OP, 3, (plain<OPT, int16_t>)) K(OP, 4, (plain<OPT, int32_t>))                      \
  K(OP, 5, (plain<OPT, int64_t>)) K(OP, 6, (plain<OPT, uint8_t>))                      \
  K(OP, 7, (plain<OPT, uint16_t>)) K(OP, 8, (plain<OPT, uint32_t>))                    \
  K(OP, 9, (plain<OPT, uint64_t>))
#define BYTE(OP, OPT) K(OP, 0, (plain<OPT, uint8_t>))
#define REALS(OP, OPT)                                                                 \
  K(OP, 10, (plain<OPT, float>)) K(OP, 11, (plain<OPT, double>))                       \
  K(OP, 12, (halfK<OPT>)) K(OP, 13, (bfloat<OPT>))
#define BOOLS(OP, OPT) K(OP, 15, (plain<OPT, uint8_t>))

// sum, prod: integers, BYTE, reals, complex
INTS(0, Sum) BYTE(0, Sum) REALS(0, Sum)
K(0, 16, (complexSum<float>)) K(0, 17, (complexSum<double>))
INTS(1, Prod) BYTE(1, Prod) REALS(1, Prod)
K(1, 16, (complexProd<float>)) K(1, 17, (complexProd<double>))
// min, max: integers, BYTE, reals
INTS(2, Min) BYTE(2, Min) REALS(2, Min)
INTS(3, Max) BYTE(3, Max) REALS(3, Max)
// land, lor, lxor: integers, bool
INTS(4, Land) BOOLS(4, Land)
INTS(5, Lor) BOOLS(5, Lor)
INTS(6, Lxor) BOOLS(6, Lxor)
// band, bor, bxor: integers, BYTE
INTS(7, Band) BYTE(7, Band)
INTS(8, Bor) BYTE(8, Bor)
INTS(9, Bxor) BYTE(9, Bxor)
// minloc, maxloc: the pair types (not long double)
K(10, 18, (loc<float, false>)) K(10, 19, (loc<double, false>)) K(10, 20, (loc<long, false>))
K(10, 21, (loc<int, false>)) K(10, 22, (loc<short, false>))
K(11, 18, (loc<float, true>)) K(11, 19, (loc<double, true>)) K(11, 20, (loc<long, true>))
K(11, 21, (loc<int, true>)) K(11, 22, (loc<short, true>))

// The local reduction kernels' loops and their table, "inout[i] = in[i] op inout[i]", one simple
// loop per (op, type), written so that the compiler vectorises it. Included by kernels.cc (the
// baseline build of the architecture) and kernels_avx2.cc (the same loops built with -mavx2
// -mf16c; kernels.cc picks it at run time where the CPU has both). Everything here has internal
// linkage, so each of the two gets its own copies compiled for its instruction set; nothing
// else includes this file.
//
// Both are built with -ftree-vectorize -fvect-cost-model=dynamic (see runtime/coll/local.mk:
// -O2 of GCC 12 only vectorises with the "very cheap" cost model, which rejects loops of
// unknown trip count); `-fopt-info-vec` on them lists every vectorised loop. Signed integers
// are combined in their unsigned twin, so overflow wraps instead of being undefined. float16 /
// bfloat16 are widened to float, combined and rounded back once (round to nearest even) with
// branch-free bit arithmetic that also vectorises, or F16C instructions where built for them.
// The two builds give the same bits for every input but NaN payloads (no FMA contraction:
// neither is built with -mfma).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "runtime/coll/op.h"

namespace rrt::coll {
namespace {

// ---- float16 / bfloat16 <-> float, branch-free (selects, no branches: vectorisable) ----------

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A select the vectoriser takes (plain ?: on these values becomes control flow).
inline uint32_t sel(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (a & m) | (b & ~m);
}

// binary16 -> binary32: exact.
inline float h2f(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = static_cast<uint32_t>(h & 0x7fffu);
  const uint32_t exp = em & 0x7c00u;
  // Normal: rebias the exponent. Inf/NaN: exponent all ones. Subnormal/zero: scale as float.
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t infnan = (em << 13) | 0x7f800000u;
  const float sub = static_cast<float>(static_cast<int32_t>(em)) * 5.9604644775390625e-08f;  // em * 2^-24
  uint32_t r = sel(exp == 0x7c00u, infnan, normal);
  r = sel(exp == 0, bitsOf(sub), r);
  return floatOf(r | sign);
}

// binary32 -> binary16, round to nearest even (F. Giesen's float_to_half_fast3_rtne).
inline uint16_t f2h(float f) {
  uint32_t u = bitsOf(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  // Subnormal results: add a magic float so the FPU rounds the mantissa into place (RNE).
  const uint32_t denormMagicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  const uint32_t sub = bitsOf(floatOf(u) + floatOf(denormMagicBits)) - denormMagicBits;
  // Normal results: rebias, round to nearest even by adding 0xfff + the lowest kept bit.
  const uint32_t mantOdd = (u >> 13) & 1u;
  const uint32_t normal = (u + ((15u - 127u) << 23) + 0xfffu + mantOdd) >> 13;
  const uint32_t big = sel(u > 0x7f800000u, 0x7e00u, 0x7c00u);  // NaN -> qNaN, too big -> Inf
  uint32_t r = sel(u < (113u << 23), sub, normal);
  r = sel(u >= ((127u + 16u) << 23), big, r);
  return static_cast<uint16_t>(r | (sign >> 16));
}

inline float b2f(uint16_t h) { return floatOf(static_cast<uint32_t>(h) << 16); }

// Round to nearest even by adding 0x7fff + the lowest kept bit; a NaN is not rounded (the carry
// could reach the sign) but quietened, keeping its sign and top payload. Written as masks on
// 32-bit lanes and one narrowing at the end, which vectorises about 2-3x better than a select
// after the shift.
inline uint16_t f2b(float f) {
  const uint32_t u = bitsOf(f);
  const uint32_t nan = 0u - static_cast<uint32_t>((u & 0x7fffffffu) > 0x7f800000u);
  const uint32_t add = (0x7fffu + ((u >> 16) & 1u)) & ~nan;
  return static_cast<uint16_t>(((u + add) >> 16) | (nan & 0x40u));
}

// ---- element-wise operations --------------------------------------------------------------

template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

struct Sum {
  template <typename T>
  static T f(T a, T b) {
    return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)));
  }
};
struct Prod {
  template <typename T>
  static T f(T a, T b) {
    // uint16 * uint16 promotes to int and may overflow it: multiply in unsigned int or wider.
    using W = std::conditional_t<(sizeof(Wide<T>) < sizeof(unsigned)) && std::is_integral_v<T>,
                                 unsigned, Wide<T>>;
    return static_cast<T>(static_cast<W>(static_cast<W>(static_cast<Wide<T>>(a)) *
                                         static_cast<W>(static_cast<Wide<T>>(b))));
  }
};
struct Min {
  template <typename T>
  static T f(T a, T b) { return a < b ? a : b; }
};
struct Max {
  template <typename T>
  static T f(T a, T b) { return a > b ? a : b; }
};
struct Land {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>((a != 0) & (b != 0)); }
};
struct Lor {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>((a != 0) | (b != 0)); }
};
struct Lxor {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>((a != 0) ^ (b != 0)); }
};
struct Band {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>(a & b); }
};
struct Bor {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>(a | b); }
};
struct Bxor {
  template <typename T>
  static T f(T a, T b) { return static_cast<T>(a ^ b); }
};

template <typename Op, typename T>
void plain(const void* in, void* inout, size_t n) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (size_t i = 0; i < n; ++i) b[i] = Op::f(a[i], b[i]);
}

// bool: MPI logical ops only.
template <typename Op>
void boolean(const void* in, void* inout, size_t n) {
  const uint8_t* __restrict a = static_cast<const uint8_t*>(in);
  uint8_t* __restrict b = static_cast<uint8_t*>(inout);
  for (size_t i = 0; i < n; ++i) b[i] = Op::template f<uint8_t>(a[i], b[i]);
}

// float16 / bfloat16 in chunks that stay in L1: widen both inputs to float, combine, round
// back, each a loop of its own that the vectoriser takes whole. With F16C (the AVX2 build) the
// float16 conversions are the CPU's: 8 values an instruction, exact one way and round to
// nearest even the other, as h2f / f2h (NaN payloads aside).
constexpr size_t kNarrowChunk = 256;

inline void widenHalf(const uint16_t* __restrict a, float* __restrict x, size_t m) {
  size_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= m; i += 8)
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))));
#endif
  for (; i < m; ++i) x[i] = h2f(a[i]);
}
inline void narrowHalf(const float* __restrict x, uint16_t* __restrict a, size_t m) {
  size_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= m; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(a + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < m; ++i) a[i] = f2h(x[i]);
}
inline void widenBf16(const uint16_t* __restrict a, float* __restrict x, size_t m) {
  for (size_t i = 0; i < m; ++i) x[i] = b2f(a[i]);
}
inline void narrowBf16(const float* __restrict x, uint16_t* __restrict a, size_t m) {
  for (size_t i = 0; i < m; ++i) a[i] = f2b(x[i]);
}

template <typename Op, void (*Widen)(const uint16_t*, float*, size_t),
          void (*Narrow)(const float*, uint16_t*, size_t)>
void narrowFloat(const void* in, void* inout, size_t n) {
  const uint16_t* a = static_cast<const uint16_t*>(in);
  uint16_t* b = static_cast<uint16_t*>(inout);
  float x[kNarrowChunk], y[kNarrowChunk];
  for (size_t c = 0; c < n; c += kNarrowChunk) {
    const size_t m = n - c < kNarrowChunk ? n - c : kNarrowChunk;
    Widen(a + c, x, m);
    Widen(b + c, y, m);
    plain<Op, float>(x, y, m);
    Narrow(y, b + c, m);
  }
}

template <typename Op>
void half(const void* in, void* inout, size_t n) {
  narrowFloat<Op, widenHalf, narrowHalf>(in, inout, n);
}
template <typename Op>
void bfloat(const void* in, void* inout, size_t n) {
  narrowFloat<Op, widenBf16, narrowBf16>(in, inout, n);
}

// Complex numbers are (re, im) pairs of R. Sum is a sum over 2n reals.
template <typename R>
void complexSum(const void* in, void* inout, size_t n) {
  plain<Sum, R>(in, inout, 2 * n);
}
template <typename R>
void complexProd(const void* in, void* inout, size_t n) {
  const R* __restrict a = static_cast<const R*>(in);
  R* __restrict b = static_cast<R*>(inout);
  for (size_t i = 0; i < n; ++i) {
    const R ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    b[2 * i] = ar * br - ai * bi;
    b[2 * i + 1] = ar * bi + ai * br;
  }
}

template <typename V>
struct Pair {
  V v;
  int i;
};

// minloc: the smaller value; on a tie the smaller index. maxloc likewise with the larger value.
template <typename V, bool kMax>
void loc(const void* in, void* inout, size_t n) {
  const Pair<V>* __restrict a = static_cast<const Pair<V>*>(in);
  Pair<V>* __restrict b = static_cast<Pair<V>*>(inout);
  for (size_t i = 0; i < n; ++i) {
    const bool better = kMax ? a[i].v > b[i].v : a[i].v < b[i].v;
    const bool tie = a[i].v == b[i].v;
    const int idx = tie ? (a[i].i < b[i].i ? a[i].i : b[i].i) : (better ? a[i].i : b[i].i);
    b[i].v = better ? a[i].v : b[i].v;
    b[i].i = idx;
  }
}

// ---- the table ----------------------------------------------------------------------------

// Which groups of types an op accepts.
enum Group : unsigned {
  kInt = 1,       // INT8..UINT64, CHAR
  kByte = 2,      // BYTE
  kReal = 4,      // float, double, long double, float16, bfloat16
  kComplex = 8,
  kBool = 16,
  kPair = 32,
};

template <typename Op>
Kernel realKernel(rrt_datatype_t t) {
  switch (t) {
    case RRT_FLOAT: return plain<Op, float>;
    case RRT_DOUBLE: return plain<Op, double>;
    case RRT_LONG_DOUBLE: return plain<Op, long double>;
    case RRT_FLOAT16: return half<Op>;
    case RRT_BFLOAT16: return bfloat<Op>;
    default: return nullptr;
  }
}

template <typename Op>
Kernel intKernel(rrt_datatype_t t) {
  switch (t) {
    case RRT_CHAR:
    case RRT_INT8: return plain<Op, int8_t>;
    case RRT_INT16: return plain<Op, int16_t>;
    case RRT_INT32: return plain<Op, int32_t>;
    case RRT_INT64: return plain<Op, int64_t>;
    case RRT_BYTE:
    case RRT_UINT8: return plain<Op, uint8_t>;
    case RRT_UINT16: return plain<Op, uint16_t>;
    case RRT_UINT32: return plain<Op, uint32_t>;
    case RRT_UINT64: return plain<Op, uint64_t>;
    default: return nullptr;
  }
}

template <bool kMax>
Kernel pairKernel(rrt_datatype_t t) {
  switch (t) {
    case RRT_FLOAT_INT: return loc<float, kMax>;
    case RRT_DOUBLE_INT: return loc<double, kMax>;
    case RRT_LONG_INT: return loc<long, kMax>;
    case RRT_2INT: return loc<int, kMax>;
    case RRT_SHORT_INT: return loc<short, kMax>;
    case RRT_LONG_DOUBLE_INT: return loc<long double, kMax>;
    default: return nullptr;
  }
}

unsigned groupOf(rrt_datatype_t t) {
  switch (t) {
    case RRT_BYTE: return kByte;
    case RRT_CHAR: case RRT_INT8: case RRT_INT16: case RRT_INT32: case RRT_INT64:
    case RRT_UINT8: case RRT_UINT16: case RRT_UINT32: case RRT_UINT64: return kInt;
    case RRT_FLOAT: case RRT_DOUBLE: case RRT_LONG_DOUBLE: case RRT_FLOAT16: case RRT_BFLOAT16:
      return kReal;
    case RRT_BOOL: return kBool;
    case RRT_C_FLOAT_COMPLEX: case RRT_C_DOUBLE_COMPLEX: return kComplex;
    case RRT_FLOAT_INT: case RRT_DOUBLE_INT: case RRT_LONG_INT: case RRT_2INT:
    case RRT_SHORT_INT: case RRT_LONG_DOUBLE_INT: return kPair;
    default: return 0;
  }
}

template <typename Op>
Kernel arith(rrt_datatype_t t) {
  switch (groupOf(t)) {
    case kInt: case kByte: return intKernel<Op>(t);
    case kReal: return realKernel<Op>(t);
    default: return nullptr;
  }
}

template <typename Op>
Kernel logical(rrt_datatype_t t) {
  switch (groupOf(t)) {
    case kInt: return intKernel<Op>(t);
    case kBool: return boolean<Op>;
    default: return nullptr;
  }
}

template <typename Op>
Kernel bitwise(rrt_datatype_t t) {
  unsigned g = groupOf(t);
  return (g == kInt || g == kByte) ? intKernel<Op>(t) : nullptr;
}

// What kernelFor (op.h) returns, from this build's loops.
Kernel kernelTable(rrt_op_t op, rrt_datatype_t t) {
  const bool isComplex = groupOf(t) == kComplex;
  switch (op) {
    case RRT_SUM:
      if (isComplex) return t == RRT_C_FLOAT_COMPLEX ? complexSum<float> : complexSum<double>;
      return arith<Sum>(t);
    case RRT_PROD:
      if (isComplex) return t == RRT_C_FLOAT_COMPLEX ? complexProd<float> : complexProd<double>;
      return arith<Prod>(t);
    case RRT_MIN: return arith<Min>(t);
    case RRT_MAX: return arith<Max>(t);
    case RRT_LAND: return logical<Land>(t);
    case RRT_LOR: return logical<Lor>(t);
    case RRT_LXOR: return logical<Lxor>(t);
    case RRT_BAND: return bitwise<Band>(t);
    case RRT_BOR: return bitwise<Bor>(t);
    case RRT_BXOR: return bitwise<Bxor>(t);
    case RRT_MINLOC: return pairKernel<false>(t);
    case RRT_MAXLOC: return pairKernel<true>(t);
    default: return nullptr;
  }
}

}  // namespace
}  // namespace rrt::coll

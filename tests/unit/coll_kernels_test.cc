// Reduction kernels: every op x predefined type against an independent scalar reference, the
// validity table (ErrOp), float16 / bfloat16 conversion (exhaustive for the 65536 halves) and
// round-to-nearest-even, user ops, and the AVX2 build of the kernels against the baseline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/coll/op.h"
#include "runtime/core/datatype.h"

namespace rrt::coll {
namespace {

template <typename T>
std::vector<T> vals(size_t n, int seed, bool small = false) {
  std::mt19937 g(static_cast<unsigned>(seed));
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(static_cast<int>(g() % 200) - 100) / T(8);
    } else {
      x = static_cast<T>(small ? g() % 3 : g());
    }
  }
  return v;
}

template <typename T, typename F>
void checkOp(rrt_op_t op, rrt_datatype_t type, F ref, bool small = false) {
  const size_t n = 1031;  // odd: vector loop plus remainder
  Reducer r;
  ASSERT_EQ(makeReducer(op, type, &r), Status::Ok) << opName(op) << " " << core::typeName(type);
  auto a = vals<T>(n, 1, small), b = vals<T>(n, 2, small);
  auto want = b;
  for (size_t i = 0; i < n; ++i) want[i] = ref(a[i], b[i]);
  r.apply(a.data(), b.data(), n);
  // Bytes that hold the value: x86's long double is 10 bytes of an 16-byte object, the rest is
  // padding that nobody initialises (memcheck reports comparing it).
  constexpr size_t kValueBytes =
      std::is_same_v<T, long double> && std::numeric_limits<long double>::digits == 64 ? 10
                                                                                      : sizeof(T);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp(&b[i], &want[i], kValueBytes), 0)
        << opName(op) << " " << core::typeName(type) << " element " << i;
}

template <typename T>
void integerOps(rrt_datatype_t type) {
  using U = std::make_unsigned_t<T>;
  checkOp<T>(RRT_SUM, type, [](T x, T y) { return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y))); });
  checkOp<T>(RRT_PROD, type, [](T x, T y) {
    return static_cast<T>(static_cast<uint64_t>(static_cast<U>(x)) * static_cast<uint64_t>(static_cast<U>(y)));
  });
  checkOp<T>(RRT_MIN, type, [](T x, T y) { return x < y ? x : y; });
  checkOp<T>(RRT_MAX, type, [](T x, T y) { return x > y ? x : y; });
  checkOp<T>(RRT_LAND, type, [](T x, T y) { return static_cast<T>(x && y); }, true);
  checkOp<T>(RRT_LOR, type, [](T x, T y) { return static_cast<T>(x || y); }, true);
  checkOp<T>(RRT_LXOR, type, [](T x, T y) { return static_cast<T>(!x != !y); }, true);
  checkOp<T>(RRT_BAND, type, [](T x, T y) { return static_cast<T>(x & y); });
  checkOp<T>(RRT_BOR, type, [](T x, T y) { return static_cast<T>(x | y); });
  checkOp<T>(RRT_BXOR, type, [](T x, T y) { return static_cast<T>(x ^ y); });
  Reducer r;
  EXPECT_EQ(makeReducer(RRT_MINLOC, type, &r), Status::ErrOp);
}

TEST(CollKernels, Integers) {
  integerOps<int8_t>(RRT_INT8);
  integerOps<int8_t>(RRT_CHAR);
  integerOps<int16_t>(RRT_INT16);
  integerOps<int32_t>(RRT_INT32);
  integerOps<int64_t>(RRT_INT64);
  integerOps<uint8_t>(RRT_UINT8);
  integerOps<uint16_t>(RRT_UINT16);
  integerOps<uint32_t>(RRT_UINT32);
  integerOps<uint64_t>(RRT_UINT64);
}

TEST(CollKernels, ByteAndBool) {
  checkOp<uint8_t>(RRT_SUM, RRT_BYTE, [](uint8_t x, uint8_t y) { return static_cast<uint8_t>(x + y); });
  checkOp<uint8_t>(RRT_BXOR, RRT_BYTE, [](uint8_t x, uint8_t y) { return static_cast<uint8_t>(x ^ y); });
  Reducer r;
  EXPECT_EQ(makeReducer(RRT_LAND, RRT_BYTE, &r), Status::ErrOp);
  checkOp<uint8_t>(RRT_LAND, RRT_BOOL, [](uint8_t x, uint8_t y) { return static_cast<uint8_t>(x && y); }, true);
  checkOp<uint8_t>(RRT_LOR, RRT_BOOL, [](uint8_t x, uint8_t y) { return static_cast<uint8_t>(x || y); }, true);
  checkOp<uint8_t>(RRT_LXOR, RRT_BOOL, [](uint8_t x, uint8_t y) { return static_cast<uint8_t>(!x != !y); }, true);
  for (rrt_op_t op : {RRT_SUM, RRT_PROD, RRT_MIN, RRT_MAX, RRT_BAND, RRT_MINLOC})
    EXPECT_EQ(makeReducer(op, RRT_BOOL, &r), Status::ErrOp) << opName(op);
}

template <typename T>
void realOps(rrt_datatype_t type) {
  checkOp<T>(RRT_SUM, type, [](T x, T y) { return x + y; });
  checkOp<T>(RRT_PROD, type, [](T x, T y) { return x * y; });
  checkOp<T>(RRT_MIN, type, [](T x, T y) { return x < y ? x : y; });
  checkOp<T>(RRT_MAX, type, [](T x, T y) { return x > y ? x : y; });
  Reducer r;
  for (rrt_op_t op : {RRT_LAND, RRT_LOR, RRT_LXOR, RRT_BAND, RRT_BOR, RRT_BXOR, RRT_MINLOC, RRT_MAXLOC})
    EXPECT_EQ(makeReducer(op, type, &r), Status::ErrOp) << opName(op);
}

TEST(CollKernels, Reals) {
  realOps<float>(RRT_FLOAT);
  realOps<double>(RRT_DOUBLE);
  realOps<long double>(RRT_LONG_DOUBLE);
}

TEST(CollKernels, Complex) {
  const size_t n = 77;
  std::vector<float> a(2 * n), b(2 * n);
  for (size_t i = 0; i < 2 * n; ++i) {
    a[i] = static_cast<float>(i % 7) - 3;
    b[i] = static_cast<float>(i % 5) - 2;
  }
  Reducer r;
  ASSERT_EQ(makeReducer(RRT_PROD, RRT_C_FLOAT_COMPLEX, &r), Status::Ok);
  auto c = b;
  r.apply(a.data(), c.data(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(c[2 * i], a[2 * i] * b[2 * i] - a[2 * i + 1] * b[2 * i + 1]);
    EXPECT_EQ(c[2 * i + 1], a[2 * i] * b[2 * i + 1] + a[2 * i + 1] * b[2 * i]);
  }
  std::vector<double> x{1, 2, 3, 4}, y{10, 20, 30, 40};
  ASSERT_EQ(makeReducer(RRT_SUM, RRT_C_DOUBLE_COMPLEX, &r), Status::Ok);
  r.apply(x.data(), y.data(), 2);
  EXPECT_EQ(y, (std::vector<double>{11, 22, 33, 44}));
  for (rrt_op_t op : {RRT_MIN, RRT_MAX, RRT_LAND, RRT_BOR})
    EXPECT_EQ(makeReducer(op, RRT_C_DOUBLE_COMPLEX, &r), Status::ErrOp);
}

template <typename V>
struct Pair {
  V v;
  int i;
};

template <typename V>
void locOps(rrt_datatype_t type) {
  std::vector<Pair<V>> a, b;
  for (int k = 0; k < 50; ++k) {
    a.push_back({static_cast<V>(k % 5), k});
    b.push_back({static_cast<V>((k * 3) % 5), 100 - k});
  }
  for (bool isMax : {false, true}) {
    Reducer r;
    ASSERT_EQ(makeReducer(isMax ? RRT_MAXLOC : RRT_MINLOC, type, &r), Status::Ok);
    auto c = b;
    r.apply(a.data(), c.data(), a.size());
    for (size_t k = 0; k < a.size(); ++k) {
      Pair<V> w;
      if (a[k].v == b[k].v) w = {a[k].v, std::min(a[k].i, b[k].i)};
      else if ((a[k].v < b[k].v) != isMax) w = a[k];
      else w = b[k];
      EXPECT_EQ(c[k].v, w.v);
      EXPECT_EQ(c[k].i, w.i) << k;
    }
    EXPECT_EQ(makeReducer(RRT_SUM, type, &r), Status::ErrOp);
  }
}

TEST(CollKernels, MinlocMaxloc) {
  locOps<float>(RRT_FLOAT_INT);
  locOps<double>(RRT_DOUBLE_INT);
  locOps<long>(RRT_LONG_INT);
  locOps<int>(RRT_2INT);
  locOps<short>(RRT_SHORT_INT);
  locOps<long double>(RRT_LONG_DOUBLE_INT);
}

// ---- float16 / bfloat16 --------------------------------------------------------------------

// The compiler's own _Float16 is the reference. Clang before 15 has none on x86 (the sanitizer
// build uses Debian's clang 14, and its __fp16 needs compiler-rt's conversion helpers, which
// libgcc lacks): there the two reference tests skip; the gcc build runs them.
#if defined(__clang__) && __clang_major__ < 15
#define RRT_NO_FLOAT16_REFERENCE 1
#else
using RefHalf = _Float16;
#endif

TEST(CollKernels, HalfConversionExhaustive) {
#ifdef RRT_NO_FLOAT16_REFERENCE
  GTEST_SKIP() << "no _Float16 in this compiler (the gcc build runs this test)";
#else
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = halfToFloat(static_cast<uint16_t>(h));
    const RefHalf ref = [&] { RefHalf x; uint16_t hh = static_cast<uint16_t>(h); std::memcpy(&x, &hh, 2); return x; }();
    if (std::isnan(static_cast<float>(ref))) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(floatToHalf(f) & 0x0200) << "quiet NaN " << h;
      continue;
    }
    ASSERT_EQ(f, static_cast<float>(ref)) << h;
    ASSERT_EQ(floatToHalf(f), h) << "round trip " << h;
  }
#endif
}

TEST(CollKernels, HalfRoundingMatchesCompiler) {
#ifdef RRT_NO_FLOAT16_REFERENCE
  GTEST_SKIP() << "no _Float16 in this compiler (the gcc build runs this test)";
#else
  // The compiler's float -> _Float16 conversion rounds to nearest even: compare on random
  // floats across the whole range, halfway cases, subnormals and overflow.
  std::mt19937 g(5);
  std::vector<float> fs = {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 1e-8f, 5.96e-8f, 2.98e-8f,
                           2.99e-8f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 6.1e-5f,
                           std::numeric_limits<float>::infinity(), -1e30f};
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = g();
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isnan(f)) fs.push_back(f);
  }
  for (int e = -26; e < 17; ++e)
    for (int k = 0; k < 64; ++k) fs.push_back(std::ldexp(1.0f + static_cast<float>(k) / 2048.0f + 1.0f / 4096.0f, e));
  for (float f : fs) {
    const RefHalf ref = static_cast<RefHalf>(f);
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    ASSERT_EQ(floatToHalf(f), want) << f;
  }
#endif
}

TEST(CollKernels, Bfloat16) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(floatToBf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 3.0f / 256), 0x3f82);  // halfway, rounds up to even
  EXPECT_EQ(floatToBf16(1.0f + 1.5f / 256), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (!std::isnan(f)) ASSERT_EQ(floatToBf16(f), h);
  }
}

TEST(CollKernels, HalfSumRoundsOncePerStep) {
  // 2048 + 1 is not representable in float16 (spacing 2 there): the float sum 2049 rounds to
  // even, 2048; 2048 + 3 = 2051 rounds to 2052.
  for (auto [type, toH, toF] : {std::tuple{RRT_FLOAT16, &floatToHalf, &halfToFloat},
                                std::tuple{RRT_BFLOAT16, &floatToBf16, &bf16ToFloat}}) {
    Reducer r;
    ASSERT_EQ(makeReducer(RRT_SUM, type, &r), Status::Ok);
    const float big = type == RRT_FLOAT16 ? 2048.0f : 256.0f;
    const float step = 1.0f;  // half the spacing (2) at big
    std::vector<uint16_t> a{toH(step), toH(3 * step), toH(0.5f), toH(-1.25f)};
    std::vector<uint16_t> b{toH(big), toH(big), toH(0.25f), toH(1e-3f)};
    std::vector<uint16_t> want(4);
    for (size_t i = 0; i < 4; ++i) want[i] = toH(toF(a[i]) + toF(b[i]));
    r.apply(a.data(), b.data(), 4);
    EXPECT_EQ(b, want);
    EXPECT_EQ(toF(b[0]), big);
    EXPECT_EQ(toF(b[1]), big + 4 * step);
  }
}

// ---- the AVX2 build against the baseline ---------------------------------------------------

// Whether two results of type t at a and b agree: the same bits, or both NaN of the same
// floating type (payloads may differ: F16C's conversions keep them, and the compiler may swap
// the operands of a commutative vector add between builds).
bool sameElement(rrt_datatype_t t, const uint8_t* a, const uint8_t* b) {
  auto nanOr = [&](size_t size, auto isNan) {
    return std::memcmp(a, b, size) == 0 || (isNan(a) && isNan(b));
  };
  auto f32 = [](const uint8_t* p) { float f; std::memcpy(&f, p, 4); return std::isnan(f); };
  auto f64 = [](const uint8_t* p) { double f; std::memcpy(&f, p, 8); return std::isnan(f); };
  auto f16 = [](const uint8_t* p) { uint16_t h; std::memcpy(&h, p, 2); return std::isnan(halfToFloat(h)); };
  auto b16 = [](const uint8_t* p) { uint16_t h; std::memcpy(&h, p, 2); return std::isnan(bf16ToFloat(h)); };
  auto f80 = [](const uint8_t* p) { long double f; std::memcpy(&f, p, sizeof f); return std::isnan(f); };
  // x86's long double: 10 value bytes, then padding that the kernels do not write.
  const size_t ldBytes = std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(long double);
  switch (t) {
    case RRT_FLOAT: return nanOr(4, f32);
    case RRT_DOUBLE: return nanOr(8, f64);
    case RRT_FLOAT16: return nanOr(2, f16);
    case RRT_BFLOAT16: return nanOr(2, b16);
    case RRT_LONG_DOUBLE: return nanOr(ldBytes, f80);
    case RRT_C_FLOAT_COMPLEX: return sameElement(RRT_FLOAT, a, b) && sameElement(RRT_FLOAT, a + 4, b + 4);
    case RRT_C_DOUBLE_COMPLEX: return sameElement(RRT_DOUBLE, a, b) && sameElement(RRT_DOUBLE, a + 8, b + 8);
    case RRT_LONG_DOUBLE_INT:
      return std::memcmp(a, b, ldBytes) == 0 && std::memcmp(a + sizeof(long double), b + sizeof(long double), 4) == 0;
    default: return std::memcmp(a, b, core::predefinedTypeSize(t)) == 0;
  }
}

TEST(CollKernels, Avx2BuildAgreesWithBaseline) {
  if (!kernelFor(KernelIsa::Avx2, RRT_SUM, RRT_FLOAT)) {
    GTEST_SKIP() << "no AVX2 build of the kernels here, or this CPU does not run it";
  }
  EXPECT_EQ(kernelIsa(), KernelIsa::Avx2) << "RRT_KERNELS unset: the widest build the CPU runs";
  EXPECT_STREQ(kernelIsaName(KernelIsa::Avx2), "avx2");
  // Random bytes: every float class appears (NaN, infinities, subnormals, zeros of both signs);
  // lengths around the 256-value chunks of the float16 / bfloat16 kernels and the 8- and
  // 16-wide vector loops, with their remainders.
  std::mt19937 g(11);
  int compared = 0;
  for (int op = 0; op < RRT_PREDEFINED_OP_COUNT; ++op) {
    for (int t = 0; t < RRT_PREDEFINED_TYPE_COUNT; ++t) {
      const Kernel base = kernelFor(KernelIsa::Baseline, op, t), wide = kernelFor(KernelIsa::Avx2, op, t);
      ASSERT_EQ(base == nullptr, wide == nullptr) << opName(op) << " " << core::typeName(t);
      if (!base) continue;
      ++compared;
      const size_t size = core::predefinedTypeSize(t);
      for (size_t n : {1, 7, 8, 15, 17, 255, 256, 257, 1031}) {
        std::vector<uint8_t> in(n * size), inout(n * size);
        for (auto& x : in) x = static_cast<uint8_t>(g());
        for (auto& x : inout) x = static_cast<uint8_t>(g());
        if (op == RRT_MINLOC || op == RRT_MAXLOC)  // ties on the value happen too
          std::memcpy(inout.data(), in.data(), n / 2 * size);
        std::vector<uint8_t> a = inout, b = inout;
        base(in.data(), a.data(), n);
        wide(in.data(), b.data(), n);
        for (size_t i = 0; i < n; ++i)
          ASSERT_TRUE(sameElement(t, &a[i * size], &b[i * size]))
              << opName(op) << " " << core::typeName(t) << " n=" << n << " element " << i;
      }
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(CollKernels, Float16SumsOfTheAvx2BuildRoundToNearestEven) {
  // Past the scalar remainder: the F16C loop's rounding on halfway cases, as HalfSumRoundsOncePerStep.
  const Kernel k = kernelFor(RRT_SUM, RRT_FLOAT16);
  std::vector<uint16_t> a(64), b(64), want(64);
  for (size_t i = 0; i < 64; ++i) {
    a[i] = floatToHalf(static_cast<float>(i % 4));          // 0, 1, 2, 3
    b[i] = floatToHalf(2048.0f + 2.0f * static_cast<float>(i / 4));
    want[i] = floatToHalf(halfToFloat(a[i]) + halfToFloat(b[i]));
  }
  k(a.data(), b.data(), 64);
  EXPECT_EQ(b, want);
  EXPECT_EQ(halfToFloat(b[1]), 2048.0f);  // 2049: halfway, to even
  EXPECT_EQ(halfToFloat(b[3]), 2052.0f);  // 2051: halfway, to even
}

// ---- user ops ------------------------------------------------------------------------------

void subtract(const void* in, void* inout, size_t count, rrt_datatype_t type, void* ud) {
  ++*static_cast<int*>(ud);
  EXPECT_EQ(type, RRT_INT32);
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (size_t i = 0; i < count; ++i) b[i] = a[i] - b[i];
}

TEST(CollKernels, UserOps) {
  int calls = 0;
  rrt_op_t op;
  ASSERT_EQ(opCreate(subtract, &calls, false, &op), Status::Ok);
  EXPECT_GE(op, kFirstUserOp);
  EXPECT_TRUE(opValid(op));
  EXPECT_FALSE(opCommutative(op));
  Reducer r;
  ASSERT_EQ(makeReducer(op, RRT_INT32, &r), Status::Ok);
  EXPECT_FALSE(r.commutative);
  std::vector<int> a{5, 6}, b{1, 2};
  r.apply(a.data(), b.data(), 2);
  EXPECT_EQ(b, (std::vector<int>{4, 4}));
  EXPECT_EQ(calls, 1);
  rrt_op_t copy = op;
  ASSERT_EQ(opFree(&op), Status::Ok);
  EXPECT_EQ(op, RRT_OP_NULL);
  EXPECT_FALSE(opValid(copy));
  EXPECT_EQ(opFree(&copy), Status::ErrOp);
  EXPECT_EQ(makeReducer(copy, RRT_INT32, &r), Status::ErrOp);
  EXPECT_EQ(makeReducer(RRT_REPLACE, RRT_INT32, &r), Status::ErrOp);
  EXPECT_EQ(makeReducer(RRT_SUM, 999, &r), Status::ErrType);
}

TEST(CollKernels, DerivedTypesReduceElementwise) {
  rrt_datatype_t t;
  ASSERT_EQ(core::typeContiguous(3, RRT_INT16, &t), Status::Ok);
  Reducer r;
  ASSERT_EQ(makeReducer(RRT_SUM, t, &r), Status::Ok);
  std::vector<int16_t> a{1, 2, 3, 4, 5, 6}, b{10, 20, 30, 40, 50, 60};
  r.apply(a.data(), b.data(), 2);
  EXPECT_EQ(b, (std::vector<int16_t>{11, 22, 33, 44, 55, 66}));
  ASSERT_EQ(core::typeFree(&t), Status::Ok);
}

}  // namespace
}  // namespace rrt::coll

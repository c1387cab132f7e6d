#include "runtime/core/datatype.h"

#include <complex.h>
#include <cstdint>
#include <vector>

namespace rrt::core {
namespace {

template <typename V>
struct Pair {
  V v;
  int i;
};

struct Predefined {
  const char* name;
  size_t size;
};

constexpr Predefined kPredefined[RRT_PREDEFINED_TYPE_COUNT] = {
    {"byte", 1},
    {"char", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"float", sizeof(float)},
    {"double", sizeof(double)},
    {"float16", 2},
    {"bfloat16", 2},
    {"long double", sizeof(long double)},
    {"bool", sizeof(bool)},
    {"float complex", 2 * sizeof(float)},
    {"double complex", 2 * sizeof(double)},
    {"float_int", sizeof(Pair<float>)},
    {"double_int", sizeof(Pair<double>)},
    {"long_int", sizeof(Pair<long>)},
    {"2int", sizeof(Pair<int>)},
    {"short_int", sizeof(Pair<short>)},
    {"long_double_int", sizeof(Pair<long double>)},
};

struct Table {
  std::vector<TypeInfo> derived;  // index = handle - kFirstDerived; base NULL when free
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

namespace detail {

constexpr PredefinedTypes makePredefinedTypes() {
  PredefinedTypes p{};
  for (int i = 0; i < RRT_PREDEFINED_TYPE_COUNT; ++i) p.info[i] = TypeInfo{i, 1, kPredefined[i].size};
  return p;
}

// Constant-initialized: valid before any constructor runs.
const PredefinedTypes kPredefinedTypes = makePredefinedTypes();

const TypeInfo* derivedLookup(rrt_datatype_t type) {
  if (type < kFirstDerived) return nullptr;
  Table& t = table();
  size_t i = static_cast<size_t>(type - kFirstDerived);
  if (i >= t.derived.size() || t.derived[i].base == RRT_DATATYPE_NULL) return nullptr;
  return &t.derived[i];
}

}  // namespace detail

size_t predefinedTypeSize(rrt_datatype_t type) {
  return type >= 0 && type < RRT_PREDEFINED_TYPE_COUNT ? kPredefined[type].size : 0;
}

const char* typeName(rrt_datatype_t type) {
  if (type >= 0 && type < RRT_PREDEFINED_TYPE_COUNT) return kPredefined[type].name;
  return typeLookup(type) ? "contiguous" : "invalid";
}

Status typeContiguous(size_t count, rrt_datatype_t oldType, rrt_datatype_t* newType) {
  const TypeInfo* old = typeLookup(oldType);
  if (!old) return Status::ErrType;
  if (count == 0 || (old->size != 0 && count > SIZE_MAX / old->size)) return Status::ErrCount;
  TypeInfo info{old->base, old->baseCount * count, old->size * count};
  Table& t = table();
  for (size_t i = 0; i < t.derived.size(); ++i) {
    if (t.derived[i].base == RRT_DATATYPE_NULL) {
      t.derived[i] = info;
      *newType = kFirstDerived + static_cast<rrt_datatype_t>(i);
      return Status::Ok;
    }
  }
  t.derived.push_back(info);
  *newType = kFirstDerived + static_cast<rrt_datatype_t>(t.derived.size() - 1);
  return Status::Ok;
}

Status typeFree(rrt_datatype_t* type) {
  if (!type || *type < kFirstDerived || !typeLookup(*type)) return Status::ErrType;
  table().derived[static_cast<size_t>(*type - kFirstDerived)] = TypeInfo{};
  *type = RRT_DATATYPE_NULL;
  return Status::Ok;
}

}  // namespace rrt::core

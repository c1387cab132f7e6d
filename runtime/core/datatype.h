// Datatypes: the predefined ones of rrt.h and contiguous derived types built from them.
//
// Every datatype is (base predefined type, number of base elements): its size is
// baseCount * size(base). Reductions work element-wise on the base type. Handles of derived
// types start at kFirstDerived; freed handles are reused.
#pragma once

#include <cstddef>

#include <rrt/rrt.h>

#include "runtime/core/status.h"

namespace rrt::core {

struct TypeInfo {
  rrt_datatype_t base = RRT_DATATYPE_NULL;  // predefined base type
  size_t baseCount = 0;                     // base elements in one element of this type
  size_t size = 0;                          // bytes of one element
};

constexpr rrt_datatype_t kFirstDerived = 64;

namespace detail {
struct PredefinedTypes {
  TypeInfo info[RRT_PREDEFINED_TYPE_COUNT];
};
extern const PredefinedTypes kPredefinedTypes;
const TypeInfo* derivedLookup(rrt_datatype_t type);  // nullptr for unknown or freed handles
}  // namespace detail

// nullptr for unknown or freed handles. Inline: predefined types are one table load.
inline const TypeInfo* typeLookup(rrt_datatype_t type) {
  if (__builtin_expect(static_cast<unsigned>(type) < RRT_PREDEFINED_TYPE_COUNT, 1))
    return &detail::kPredefinedTypes.info[type];
  return detail::derivedLookup(type);
}
// Size in bytes of a predefined type (0 if not predefined).
size_t predefinedTypeSize(rrt_datatype_t type);
const char* typeName(rrt_datatype_t type);

Status typeContiguous(size_t count, rrt_datatype_t oldType, rrt_datatype_t* newType);
Status typeFree(rrt_datatype_t* type);

}  // namespace rrt::core

#include "runtime/coll/op.h"

#include <vector>

#include "runtime/core/datatype.h"

namespace rrt::coll {
namespace {

struct UserOp {
  rrt_user_function* fn = nullptr;  // nullptr: free slot
  void* userData = nullptr;
  bool commutative = true;
};

std::vector<UserOp>& userOps() {
  static std::vector<UserOp> ops;
  return ops;
}

const UserOp* userOp(rrt_op_t op) {
  if (op < kFirstUserOp) return nullptr;
  size_t i = static_cast<size_t>(op - kFirstUserOp);
  if (i >= userOps().size() || !userOps()[i].fn) return nullptr;
  return &userOps()[i];
}

const char* const kNames[RRT_PREDEFINED_OP_COUNT] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor",
    "minloc", "maxloc", "replace", "no_op"};

}  // namespace

bool opValid(rrt_op_t op) {
  return (op >= 0 && op < RRT_PREDEFINED_OP_COUNT && op != RRT_REPLACE && op != RRT_NO_OP) ||
         userOp(op);
}

bool opCommutative(rrt_op_t op) {
  const UserOp* u = userOp(op);
  return u ? u->commutative : true;
}

const char* opName(rrt_op_t op) {
  if (op >= 0 && op < RRT_PREDEFINED_OP_COUNT) return kNames[op];
  return userOp(op) ? "user" : "invalid";
}

Status makeReducer(rrt_op_t op, rrt_datatype_t type, Reducer* out) {
  const core::TypeInfo* info = core::typeLookup(type);
  if (!info) return Status::ErrType;
  Reducer r;
  r.type = type;
  r.baseCount = info->baseCount;
  if (const UserOp* u = userOp(op)) {
    r.user = u->fn;
    r.userData = u->userData;
    r.commutative = u->commutative;
  } else {
    if (op < 0 || op >= RRT_PREDEFINED_OP_COUNT) return Status::ErrOp;
    r.kernel = kernelFor(op, info->base);
    if (!r.kernel) return Status::ErrOp;
    r.op = op;
    r.baseType = info->base;
  }
  *out = r;
  return Status::Ok;
}

Status opCreate(rrt_user_function* fn, void* userData, bool commutative, rrt_op_t* op) {
  if (!fn || !op) return Status::ErrArg;
  auto& ops = userOps();
  size_t i = 0;
  while (i < ops.size() && ops[i].fn) ++i;
  if (i == ops.size()) ops.emplace_back();
  ops[i] = UserOp{fn, userData, commutative};
  *op = kFirstUserOp + static_cast<rrt_op_t>(i);
  return Status::Ok;
}

Status opFree(rrt_op_t* op) {
  if (!op || !userOp(*op)) return Status::ErrOp;
  userOps()[static_cast<size_t>(*op - kFirstUserOp)] = UserOp{};
  *op = RRT_OP_NULL;
  return Status::Ok;
}

}  // namespace rrt::coll

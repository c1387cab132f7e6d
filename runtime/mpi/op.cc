// Reduction operations: the predefined ones are rrt's; user functions are bridged from rrt's
// signature (count as size_t, rrt type, user_data) to MPI's (int *len, MPI_Datatype *).
//
// For user ops the layer gives rrt one rrt contiguous type per MPI datatype (typeOpType), whose
// elements are that datatype's extent in bytes, so the bridge can name the MPI datatype the
// user function expects (MPI_INT and MPI_INT32_T are one rrt type but differ to a user
// function that switches on the handle) and rrt never splits an element.
#include <climits>
#include <map>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

Table<Op>& ops() {
  static Table<Op> t;
  return t;
}

struct UserFn {  // rrt's user_data
  MPI_User_function* fn;
};

// One UserFn per user function, for the life of the process: a pending non-blocking reduction
// may still call it after MPI_Op_free, and ops created and freed over and over with the same
// function take no more memory (std::map: the entries never move).
UserFn* userFnFor(MPI_User_function* fn) {
  static std::map<MPI_User_function*, UserFn> table;
  return &table.try_emplace(fn, UserFn{fn}).first->second;
}

// The MPI type to name for an rrt predefined type, when rrt hands one back instead of ours.
MPI_Datatype mpiTypeOfRrt(rrt_datatype_t t) {
  for (int i = 1; i < RRT_MPI_PREDEFINED_TYPES_; ++i) {
    Type* ty = typeGet(RRT_MPI_TYPE_(i));
    if (ty && ty->rrtType == t) return RRT_MPI_TYPE_(i);
  }
  return MPI_DATATYPE_NULL;
}

void bridge(const void* in, void* inout, size_t count, rrt_datatype_t type, void* userData) {
  auto* u = static_cast<UserFn*>(userData);
  MPI_Datatype dt = typeFromOpType(type);
  if (dt == MPI_DATATYPE_NULL) dt = mpiTypeOfRrt(type);
  Type* t = typeGet(dt);
  size_t extent = t ? static_cast<size_t>(t->extent) : 0;
  char* a = const_cast<char*>(static_cast<const char*>(in));
  char* b = static_cast<char*>(inout);
  while (count > 0) {  // MPI's len is an int: hand over at most INT_MAX elements at a time
    int len = count > INT_MAX ? INT_MAX : static_cast<int>(count);
    u->fn(a, b, &len, &dt);
    count -= static_cast<size_t>(len);
    a += extent * static_cast<size_t>(len);
    b += extent * static_cast<size_t>(len);
  }
}

}  // namespace

Op* opGet(MPI_Op handle) { return ops().get(handleIndex(handle, kKindOp)); }

void opsInit() {
  if (ops().capacity() > 0) return;
  const rrt_op_t map[] = {RRT_OP_NULL, RRT_MAX,    RRT_MIN,    RRT_SUM,  RRT_PROD,
                          RRT_LAND,    RRT_BAND,   RRT_LOR,    RRT_BOR,  RRT_LXOR,
                          RRT_BXOR,    RRT_MINLOC, RRT_MAXLOC, RRT_REPLACE /* one-sided only */,
                          RRT_NO_OP /* one-sided only */};
  for (rrt_op_t r : map) ops().add(Op{r, nullptr, true});
  ops().remove(0);
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Op_create);
int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  if (user_fn == nullptr || op == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  rrt_op_t rop;
  if (int e = check(MPI_COMM_WORLD, rrt_op_create(bridge, userFnFor(user_fn), commute, &rop),
                    __func__))
    return e;
  *op = kKindOp | ops().add(Op{rop, user_fn, commute != 0});
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Op_free);
int PMPI_Op_free(MPI_Op* op) {
  Op* o = op ? opGet(*op) : nullptr;
  if (o == nullptr || o->fn == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_OP, __func__);
  rrt_op_t rop = o->rop;
  if (int e = check(MPI_COMM_WORLD, rrt_op_free(&rop), __func__)) return e;
  ops().remove(handleIndex(*op, kKindOp));
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Op_commutative);
int PMPI_Op_commutative(MPI_Op op, int* commute) {
  Op* o = opGet(op);
  if (o == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_OP, __func__);
  *commute = o->commute;
  return MPI_SUCCESS;
}

}  // extern "C"

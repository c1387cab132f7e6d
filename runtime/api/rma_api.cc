// One-sided entry points: argument checks, then one call into runtime/rma. Errors go through
// the error handler of the window's communicator.
#include <cstring>
#include <vector>

#include "runtime/api/api_check.h"
#include "runtime/coll/op.h"
#include "runtime/gpu/gpu.h"
#include "runtime/rma/window.h"

using namespace rrt;
using proto::wire::RmaOp;

namespace {

// The window, or nullptr after logging.
rma::Window* checkWin(const char* fn, rrt_win_t handle, Status* st) {
  *st = api::checkActive(fn);
  if (*st != Status::Ok) return nullptr;
  rma::Window* w = rma::lookup(handle);
  if (!w) {
    RRT_WARN("%s: invalid window %d", fn, handle);
    *st = Status::ErrWin;
  }
  return w;
}

#define WIN_OR_FAIL(fn, var, handle)                     \
  Status st_##var;                                        \
  rma::Window* var = checkWin(fn, handle, &st_##var);     \
  if (!var) RRT_API_FAIL(fn, nullptr, st_##var)

// Checks and fills the common part of a data-movement call. accumulate: type must reduce with
// op (RRT_REPLACE allowed; RRT_NO_OP when fetching).
Status prepare(const char* fn, rma::Window& w, RmaOp op, const void* origin, void* result,
               size_t count, rrt_datatype_t type, int target, size_t disp, rrt_op_t rop,
               rma::OpArgs* a) {
  const core::TypeInfo* info;
  RRT_TRY(api::checkType(fn, type, &info));
  size_t bytes;
  RRT_TRY(api::checkCountBytes(fn, count, info->size, &bytes));
  RRT_TRY(api::checkRank(fn, *w.comm, target, "target", false));
  a->op = op;
  a->target = target;
  a->disp = disp;
  a->bytes = bytes;
  a->type = info->base;
  a->rop = rop;
  switch (op) {
    case RmaOp::Put:
      RRT_TRY(api::checkBuffer(fn, origin, bytes, "origin"));
      a->origin = origin;
      a->originBytes = bytes;
      a->type = RRT_BYTE;
      break;
    case RmaOp::Get:
      RRT_TRY(api::checkBuffer(fn, result, bytes, "origin"));
      a->result = result;
      a->type = RRT_BYTE;
      break;
    case RmaOp::Acc:
    case RmaOp::GetAcc: {
      const bool fetch = op == RmaOp::GetAcc;
      if (!(rop == RRT_REPLACE || (fetch && rop == RRT_NO_OP) ||
            (rop >= 0 && rop < RRT_PREDEFINED_OP_COUNT && rop != RRT_NO_OP &&
             coll::kernelFor(rop, info->base)))) {
        RRT_WARN("%s: op %d is not a predefined op valid on type %d", fn, rop, type);
        return Status::ErrOp;
      }
      if (rop != RRT_NO_OP) {
        RRT_TRY(api::checkBuffer(fn, origin, bytes, "origin"));
        a->origin = origin;
        a->originBytes = bytes;
      }
      if (fetch) {
        RRT_TRY(api::checkBuffer(fn, result, bytes, "result"));
        a->result = result;
      }
      break;
    }
    default:
      return Status::ErrInternal;
  }
  // One-sided operations copy origin data on the host (inline payloads, results): CUDA device
  // buffers are refused rather than dereferenced.
  if (gpu::isDevice(a->origin, a->originBytes) || gpu::isDevice(a->result, bytes)) {
    RRT_WARN("%s: CUDA device buffers are not supported by one-sided operations", fn);
    return Status::ErrUnsupported;
  }
  return Status::Ok;
}

int data(const char* fn, RmaOp op, const void* origin, void* result, size_t count,
         rrt_datatype_t type, int target, size_t disp, rrt_op_t rop, rrt_win_t win,
         rrt_request_t* request, bool wantRequest) {
  WIN_OR_FAIL(fn, w, win);
  if (wantRequest && !request) RRT_API_FAIL(fn, w->comm, Status::ErrArg);
  rma::OpArgs a;
  RRT_API_CHECK(fn, w->comm, prepare(fn, *w, op, origin, result, count, type, target, disp, rop, &a));
  core::Request* r = nullptr;
  RRT_API_CHECK(fn, w->comm, rma::issue(*w, a, wantRequest ? &r : nullptr));
  if (wantRequest) *request = r;
  return RRT_SUCCESS;
}

// rrt_win_allocate and rrt_win_allocate_shared: rrt's memory (shared: one node-wide segment).
int allocate(const char* fn, size_t size, int dispUnit, rrt_comm_t comm, void* baseptr,
             rrt_win_t* win, bool shared) {
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  proto::Comm* c = api::checkComm(fn, comm);
  if (!c) RRT_API_FAIL(fn, nullptr, Status::ErrComm);
  if (!win || !baseptr || dispUnit <= 0 || c->inter) RRT_API_FAIL(fn, c, Status::ErrArg);
  rma::Window* w;
  RRT_API_CHECK(fn, c, shared ? rma::createShared(*c, size, dispUnit, &w)
                              : rma::create(*c, rma::Kind::Allocate, nullptr, size, dispUnit, &w));
  *static_cast<void**>(baseptr) = w->base;
  *win = w->handle;
  return RRT_SUCCESS;
}

}  // namespace

extern "C" {

int rrt_win_create(void* base, size_t size, int disp_unit, rrt_comm_t comm, rrt_win_t* win) {
  const char* fn = "rrt_win_create";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  proto::Comm* c = api::checkComm(fn, comm);
  if (!c) RRT_API_FAIL(fn, nullptr, Status::ErrComm);
  if (!win || disp_unit <= 0 || c->inter) RRT_API_FAIL(fn, c, Status::ErrArg);
  RRT_API_CHECK(fn, c, api::checkBuffer(fn, base, size, "base"));
  if (gpu::isDevice(base, size)) RRT_API_FAIL(fn, c, Status::ErrUnsupported);
  rma::Window* w;
  RRT_API_CHECK(fn, c, rma::create(*c, rma::Kind::Create, base, size, disp_unit, &w));
  *win = w->handle;
  return RRT_SUCCESS;
}

int rrt_win_allocate(size_t size, int disp_unit, rrt_comm_t comm, void* baseptr,
                     rrt_win_t* win) {
  return allocate("rrt_win_allocate", size, disp_unit, comm, baseptr, win, false);
}

int rrt_win_allocate_shared(size_t size, int disp_unit, rrt_comm_t comm, void* baseptr,
                            rrt_win_t* win) {
  return allocate("rrt_win_allocate_shared", size, disp_unit, comm, baseptr, win, true);
}

int rrt_win_shared_query(rrt_win_t win, int rank, size_t* size, int* disp_unit, void* baseptr) {
  WIN_OR_FAIL("rrt_win_shared_query", w, win);
  if (!size || !disp_unit || !baseptr) RRT_API_FAIL("rrt_win_shared_query", w->comm, Status::ErrArg);
  void* base = nullptr;
  RRT_API_CHECK("rrt_win_shared_query", w->comm,
                rma::sharedQuery(*w, rank, size, disp_unit, &base));
  *static_cast<void**>(baseptr) = base;
  return RRT_SUCCESS;
}

int rrt_win_create_dynamic(rrt_comm_t comm, rrt_win_t* win) {
  const char* fn = "rrt_win_create_dynamic";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  proto::Comm* c = api::checkComm(fn, comm);
  if (!c) RRT_API_FAIL(fn, nullptr, Status::ErrComm);
  if (!win || c->inter) RRT_API_FAIL(fn, c, Status::ErrArg);
  rma::Window* w;
  RRT_API_CHECK(fn, c, rma::create(*c, rma::Kind::Dynamic, nullptr, 0, 1, &w));
  *win = w->handle;
  return RRT_SUCCESS;
}

int rrt_win_attach(rrt_win_t win, void* base, size_t size) {
  WIN_OR_FAIL("rrt_win_attach", w, win);
  if (gpu::isDevice(base, size)) RRT_API_FAIL("rrt_win_attach", w->comm, Status::ErrUnsupported);
  return api::finish("rrt_win_attach", w->comm, rma::attach(*w, base, size));
}

int rrt_win_detach(rrt_win_t win, const void* base) {
  WIN_OR_FAIL("rrt_win_detach", w, win);
  return api::finish("rrt_win_detach", w->comm, rma::detach(*w, base));
}

int rrt_win_free(rrt_win_t* win) {
  const char* fn = "rrt_win_free";
  if (!win) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  WIN_OR_FAIL(fn, w, *win);
  if (w->accessOpen || w->exposureOpen || w->lockedAll) RRT_API_FAIL(fn, w->comm, Status::ErrRmaSync);
  for (uint8_t l : w->locked)
    if (l) RRT_API_FAIL(fn, w->comm, Status::ErrRmaSync);
  Status st = rma::free(w);
  *win = RRT_WIN_NULL;
  return api::finish(fn, nullptr, st);
}

int rrt_win_get_info(rrt_win_t win, void** base, size_t* size, int* disp_unit) {
  WIN_OR_FAIL("rrt_win_get_info", w, win);
  if (base) *base = w->base;
  if (size) *size = w->size;
  if (disp_unit) *disp_unit = w->dispUnit;
  return RRT_SUCCESS;
}

int rrt_win_put(const void* origin, size_t count, rrt_datatype_t type, int target,
                size_t target_disp, rrt_win_t win) {
  return data("rrt_win_put", RmaOp::Put, origin, nullptr, count, type, target, target_disp,
              RRT_OP_NULL, win, nullptr, false);
}
int rrt_win_get(void* origin, size_t count, rrt_datatype_t type, int target, size_t target_disp,
                rrt_win_t win) {
  return data("rrt_win_get", RmaOp::Get, nullptr, origin, count, type, target, target_disp,
              RRT_OP_NULL, win, nullptr, false);
}
int rrt_win_accumulate(const void* origin, size_t count, rrt_datatype_t type, int target,
                       size_t target_disp, rrt_op_t op, rrt_win_t win) {
  return data("rrt_win_accumulate", RmaOp::Acc, origin, nullptr, count, type, target,
              target_disp, op, win, nullptr, false);
}
int rrt_win_get_accumulate(const void* origin, void* result, size_t count, rrt_datatype_t type,
                           int target, size_t target_disp, rrt_op_t op, rrt_win_t win) {
  return data("rrt_win_get_accumulate", RmaOp::GetAcc, origin, result, count, type, target,
              target_disp, op, win, nullptr, false);
}
int rrt_win_fetch_and_op(const void* origin, void* result, rrt_datatype_t type, int target,
                         size_t target_disp, rrt_op_t op, rrt_win_t win) {
  return data("rrt_win_fetch_and_op", RmaOp::GetAcc, origin, result, 1, type, target,
              target_disp, op, win, nullptr, false);
}
int rrt_win_rput(const void* origin, size_t count, rrt_datatype_t type, int target,
                 size_t target_disp, rrt_win_t win, rrt_request_t* request) {
  return data("rrt_win_rput", RmaOp::Put, origin, nullptr, count, type, target, target_disp,
              RRT_OP_NULL, win, request, true);
}
int rrt_win_rget(void* origin, size_t count, rrt_datatype_t type, int target, size_t target_disp,
                 rrt_win_t win, rrt_request_t* request) {
  return data("rrt_win_rget", RmaOp::Get, nullptr, origin, count, type, target, target_disp,
              RRT_OP_NULL, win, request, true);
}
int rrt_win_raccumulate(const void* origin, size_t count, rrt_datatype_t type, int target,
                        size_t target_disp, rrt_op_t op, rrt_win_t win, rrt_request_t* request) {
  return data("rrt_win_raccumulate", RmaOp::Acc, origin, nullptr, count, type, target,
              target_disp, op, win, request, true);
}
int rrt_win_rget_accumulate(const void* origin, void* result, size_t count, rrt_datatype_t type,
                            int target, size_t target_disp, rrt_op_t op, rrt_win_t win,
                            rrt_request_t* request) {
  return data("rrt_win_rget_accumulate", RmaOp::GetAcc, origin, result, count, type, target,
              target_disp, op, win, request, true);
}

int rrt_win_compare_and_swap(const void* origin, const void* compare, void* result,
                             rrt_datatype_t type, int target, size_t target_disp,
                             rrt_win_t win) {
  const char* fn = "rrt_win_compare_and_swap";
  WIN_OR_FAIL(fn, w, win);
  const core::TypeInfo* info;
  RRT_API_CHECK(fn, w->comm, api::checkType(fn, type, &info));
  if (info->baseCount != 1 || info->size > proto::wire::kRmaInlineMax / 2)
    RRT_API_FAIL(fn, w->comm, Status::ErrType);
  if (!origin || !compare || !result) RRT_API_FAIL(fn, w->comm, Status::ErrBuffer);
  RRT_API_CHECK(fn, w->comm, api::checkRank(fn, *w->comm, target, "target", false));
  unsigned char both[proto::wire::kRmaInlineMax];
  std::memcpy(both, compare, info->size);
  std::memcpy(both + info->size, origin, info->size);
  rma::OpArgs a;
  a.op = RmaOp::Cas;
  a.origin = both;  // copied into the header's message at once
  a.originBytes = 2 * info->size;
  a.result = result;
  a.bytes = info->size;
  a.type = info->base;
  a.target = target;
  a.disp = target_disp;
  return api::finish(fn, w->comm, rma::issue(*w, a, nullptr));
}

int rrt_win_flush(int target, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_flush", w, win);
  if (target < 0 && target != RRT_PROC_NULL) target = -1;
  return api::finish("rrt_win_flush", w->comm, rma::flush(*w, target));
}
int rrt_win_flush_local(int target, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_flush_local", w, win);
  if (target < 0 && target != RRT_PROC_NULL) target = -1;
  return api::finish("rrt_win_flush_local", w->comm, rma::flush(*w, target));
}
int rrt_win_fence(int assert_bits, rrt_win_t win) {
  (void)assert_bits;
  WIN_OR_FAIL("rrt_win_fence", w, win);
  return api::finish("rrt_win_fence", w->comm, rma::fence(*w));
}
int rrt_win_lock(int lock_type, int target, int assert_bits, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_lock", w, win);
  return api::finish("rrt_win_lock", w->comm, rma::lock(*w, lock_type, target, assert_bits));
}
int rrt_win_unlock(int target, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_unlock", w, win);
  return api::finish("rrt_win_unlock", w->comm, rma::unlock(*w, target));
}
int rrt_win_lock_all(int assert_bits, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_lock_all", w, win);
  return api::finish("rrt_win_lock_all", w->comm, rma::lockAll(*w, assert_bits));
}
int rrt_win_unlock_all(rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_unlock_all", w, win);
  return api::finish("rrt_win_unlock_all", w->comm, rma::unlockAll(*w));
}
int rrt_win_post(int n, const int* ranks, int assert_bits, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_post", w, win);
  if (n < 0 || (n > 0 && !ranks)) RRT_API_FAIL("rrt_win_post", w->comm, Status::ErrArg);
  return api::finish("rrt_win_post", w->comm,
                     rma::post(*w, std::vector<int>(ranks, ranks + n), assert_bits));
}
int rrt_win_start(int n, const int* ranks, int assert_bits, rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_start", w, win);
  if (n < 0 || (n > 0 && !ranks)) RRT_API_FAIL("rrt_win_start", w->comm, Status::ErrArg);
  return api::finish("rrt_win_start", w->comm,
                     rma::start(*w, std::vector<int>(ranks, ranks + n), assert_bits));
}
int rrt_win_complete(rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_complete", w, win);
  return api::finish("rrt_win_complete", w->comm, rma::complete(*w));
}
int rrt_win_wait(rrt_win_t win) {
  WIN_OR_FAIL("rrt_win_wait", w, win);
  return api::finish("rrt_win_wait", w->comm, rma::wait(*w));
}
int rrt_win_test(rrt_win_t win, int* flag) {
  WIN_OR_FAIL("rrt_win_test", w, win);
  if (!flag) RRT_API_FAIL("rrt_win_test", w->comm, Status::ErrArg);
  bool done = false;
  Status st = rma::test(*w, &done);
  *flag = done;
  return api::finish("rrt_win_test", w->comm, st);
}

}  // extern "C"

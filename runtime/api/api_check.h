// Shared helpers of the extern "C" entry points: state checks, argument checks that log one
// line naming the call and the argument (at RRT_LOG=warn or higher), and the error-handler
// logic on the way out. Every entry point is: checks, one call into the layer below, return.
#pragma once

#include <rrt/rrt.h>

#include "runtime/core/datatype.h"
#include "runtime/core/log.h"
#include "runtime/core/status.h"
#include "runtime/api/runtime_state.h"
#include "runtime/proto/comm.h"

namespace rrt::api {

// The checks are inline (they run on every call of the fast path); the failures log from the
// cold, out-of-line functions in detail.
namespace detail {
[[gnu::cold]] Status inactive(const char* fn);
[[gnu::cold]] void badComm(const char* fn, rrt_comm_t handle);
[[gnu::cold]] Status badRank(const char* fn, const proto::Comm& c, int rank, const char* what);
[[gnu::cold]] Status badRoot(const char* fn, const proto::Comm& c, int root);
[[gnu::cold]] Status badTag(const char* fn, int tag, bool allowAny);
[[gnu::cold]] Status badType(const char* fn, rrt_datatype_t type);
[[gnu::cold]] Status badBuffer(const char* fn, size_t count, const char* what);
[[gnu::cold]] Status badCount(const char* fn, size_t count);
}  // namespace detail

// Ok when rrt_init has run and rrt_finalize has not (else ErrNotInitialized / ErrFinalized).
inline Status checkActive(const char* fn) {
  if (__builtin_expect(gState == State::Active, 1)) return Status::Ok;
  return detail::inactive(fn);
}

// The communicator, or nullptr after logging "fn: invalid communicator".
inline proto::Comm* checkComm(const char* fn, rrt_comm_t handle) {
  proto::Comm* c = proto::commLookup(handle);
  if (__builtin_expect(!c, 0)) detail::badComm(fn, handle);
  return c;
}

// Argument checks: Ok, or the error after a log line "fn: <arg> ...".
// checkRank allows PROC_NULL, and ANY_SOURCE when allowAny.
inline Status checkRank(const char* fn, const proto::Comm& c, int rank, const char* what,
                        bool allowAny) {
  if (__builtin_expect(rank >= 0 && rank < c.size, 1)) return Status::Ok;
  if (rank == RRT_PROC_NULL || (allowAny && rank == RRT_ANY_SOURCE)) return Status::Ok;
  return detail::badRank(fn, c, rank, what);
}
inline Status checkRoot(const char* fn, const proto::Comm& c, int root) {
  if (__builtin_expect(root >= 0 && root < c.size, 1)) return Status::Ok;
  return detail::badRoot(fn, c, root);
}
inline Status checkTag(const char* fn, int tag, bool allowAny) {
  if (__builtin_expect(tag >= 0 && tag <= RRT_TAG_UB, 1)) return Status::Ok;
  if (allowAny && tag == RRT_ANY_TAG) return Status::Ok;
  return detail::badTag(fn, tag, allowAny);
}
inline Status checkType(const char* fn, rrt_datatype_t type, const core::TypeInfo** info) {
  *info = core::typeLookup(type);
  if (__builtin_expect(*info != nullptr, 1)) return Status::Ok;
  return detail::badType(fn, type);
}
inline Status checkBuffer(const char* fn, const void* buf, size_t count, const char* what) {
  if (__builtin_expect(buf != nullptr || count == 0, 1)) return Status::Ok;
  return detail::badBuffer(fn, count, what);
}
inline Status checkCountBytes(const char* fn, size_t count, size_t typeSize, size_t* bytes) {
  if (__builtin_expect(__builtin_mul_overflow(count, typeSize, bytes), 0))
    return detail::badCount(fn, count);
  return Status::Ok;
}

// Converts a status to the C code, applying comm's error handler (ERRORS_ARE_FATAL aborts the
// job with a message naming fn). comm may be nullptr (then the world's handler applies).
int finish(const char* fn, const proto::Comm* comm, Status s);
// The same with the handler read beforehand (errhandlerOf): for results of requests, whose
// communicator may be deleted by their release (a freed communicator's last request).
rrt_errhandler_t errhandlerOf(const proto::Comm* comm);
int finishWith(const char* fn, rrt_errhandler_t handler, Status s);

}  // namespace rrt::api

// Returns from an entry point with err after the error handler ran.
#define RRT_API_FAIL(fn, comm, s) return ::rrt::api::finish(fn, comm, s)
#define RRT_API_CHECK(fn, comm, expr)                          \
  do {                                                         \
    ::rrt::Status rrt_chk_ = (expr);                           \
    if (rrt_chk_ != ::rrt::Status::Ok) RRT_API_FAIL(fn, comm, rrt_chk_); \
  } while (0)

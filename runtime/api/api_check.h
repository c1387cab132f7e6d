// Shared helpers of the extern "C" entry points: state checks, argument checks that log one
// line naming the call and the argument (at RRT_LOG=warn or higher), and the error-handler
// logic on the way out. Every entry point is: checks, one call into the layer below, return.
#pragma once

#include <rrt/rrt.h>

#include "runtime/core/datatype.h"
#include "runtime/core/log.h"
#include "runtime/core/status.h"
#include "runtime/proto/comm.h"

namespace rrt::api {

// Ok when rrt_init has run and rrt_finalize has not (else ErrNotInitialized / ErrFinalized).
Status checkActive(const char* fn);

// The communicator, or nullptr after logging "fn: invalid communicator".
proto::Comm* checkComm(const char* fn, rrt_comm_t handle);

// Argument checks: Ok, or the error after a log line "fn: <arg> ...".
Status checkRank(const char* fn, const proto::Comm& c, int rank, const char* what,
                 bool allowAny);                                   // allows PROC_NULL
Status checkRoot(const char* fn, const proto::Comm& c, int root);
Status checkTag(const char* fn, int tag, bool allowAny);
Status checkType(const char* fn, rrt_datatype_t type, const core::TypeInfo** info);
Status checkBuffer(const char* fn, const void* buf, size_t count, const char* what);
Status checkCountBytes(const char* fn, size_t count, size_t typeSize, size_t* bytes);

// Converts a status to the C code, applying comm's error handler (ERRORS_ARE_FATAL aborts the
// job with a message naming fn). comm may be nullptr (then the world's handler applies).
int finish(const char* fn, const proto::Comm* comm, Status s);

}  // namespace rrt::api

// Returns from an entry point with err after the error handler ran.
#define RRT_API_FAIL(fn, comm, s) return ::rrt::api::finish(fn, comm, s)
#define RRT_API_CHECK(fn, comm, expr)                          \
  do {                                                         \
    ::rrt::Status rrt_chk_ = (expr);                           \
    if (rrt_chk_ != ::rrt::Status::Ok) RRT_API_FAIL(fn, comm, rrt_chk_); \
  } while (0)

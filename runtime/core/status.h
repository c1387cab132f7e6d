// Status: the one result type inside rrt.
//
// Errors share their numbers with the C API's RRT_ERR_* codes, so the C boundary converts with a
// cast. Ok, InProgress and NoResource are the three outcomes of a non-blocking transport or
// protocol operation (done now / completes later through its Completion / retry later from the
// pending queue); the last two never cross the C boundary.
#pragma once

#include <rrt/rrt.h>

namespace rrt {

enum class [[nodiscard]] Status : int {
  Ok = RRT_SUCCESS,
  InProgress = -1,
  NoResource = -2,
  ErrArg = RRT_ERR_ARG,
  ErrRank = RRT_ERR_RANK,
  ErrTag = RRT_ERR_TAG,
  ErrCount = RRT_ERR_COUNT,
  ErrBuffer = RRT_ERR_BUFFER,
  ErrType = RRT_ERR_TYPE,
  ErrComm = RRT_ERR_COMM,
  ErrOp = RRT_ERR_OP,
  ErrRoot = RRT_ERR_ROOT,
  ErrRequest = RRT_ERR_REQUEST,
  ErrTruncate = RRT_ERR_TRUNCATE,
  ErrNotInitialized = RRT_ERR_NOT_INITIALIZED,
  ErrFinalized = RRT_ERR_FINALIZED,
  ErrProcFailed = RRT_ERR_PROC_FAILED,
  ErrNoMemory = RRT_ERR_NO_MEMORY,
  ErrTransport = RRT_ERR_TRANSPORT,
  ErrTimeout = RRT_ERR_TIMEOUT,
  ErrUnsupported = RRT_ERR_UNSUPPORTED,
  ErrInStatus = RRT_ERR_IN_STATUS,
  ErrWireup = RRT_ERR_WIREUP,
  ErrInternal = RRT_ERR_INTERNAL,
  ErrRmaRange = RRT_ERR_RMA_RANGE,
  ErrRmaSync = RRT_ERR_RMA_SYNC,
  ErrWin = RRT_ERR_WIN,
};

inline bool ok(Status s) { return s == Status::Ok; }
// An error, as opposed to Ok / InProgress / NoResource.
inline bool failed(Status s) { return static_cast<int>(s) > 0; }
inline int toC(Status s) { return failed(s) ? static_cast<int>(s) : RRT_SUCCESS; }

const char* statusName(Status s);

}  // namespace rrt

// Propagates an error (anything but Ok) to the caller.
#define RRT_TRY(expr)                                 \
  do {                                                \
    ::rrt::Status rrt_try_s_ = (expr);                \
    if (rrt_try_s_ != ::rrt::Status::Ok) return rrt_try_s_; \
  } while (0)

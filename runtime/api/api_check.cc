#include "runtime/api/api_check.h"

#include <cstdint>
#include <cstdlib>

#include "runtime/api/runtime_state.h"

namespace rrt::api {

namespace detail {

Status inactive(const char* fn) {
  if (gState == State::Finalized) {
    RRT_WARN("%s: called after rrt_finalize", fn);
    return Status::ErrFinalized;
  }
  RRT_WARN("%s: called before rrt_init", fn);
  return Status::ErrNotInitialized;
}

void badComm(const char* fn, rrt_comm_t handle) {
  RRT_WARN("%s: invalid communicator %d", fn, handle);
}

Status badRank(const char* fn, const proto::Comm& c, int rank, const char* what) {
  RRT_WARN("%s: %s %d out of range (communicator size %d)", fn, what, rank, c.size);
  return Status::ErrRank;
}

Status badRoot(const char* fn, const proto::Comm& c, int root) {
  RRT_WARN("%s: root %d out of range (communicator size %d)", fn, root, c.size);
  return Status::ErrRoot;
}

Status badTag(const char* fn, int tag, bool allowAny) {
  RRT_WARN("%s: invalid tag %d (valid: 0..%d%s)", fn, tag, RRT_TAG_UB,
           allowAny ? " or RRT_ANY_TAG" : "");
  return Status::ErrTag;
}

Status badType(const char* fn, rrt_datatype_t type) {
  RRT_WARN("%s: invalid datatype %d", fn, type);
  return Status::ErrType;
}

Status badBuffer(const char* fn, size_t count, const char* what) {
  RRT_WARN("%s: %s is NULL with count %zu", fn, what, count);
  return Status::ErrBuffer;
}

Status badCount(const char* fn, size_t count) {
  RRT_WARN("%s: count %zu too large", fn, count);
  return Status::ErrCount;
}

}  // namespace detail

rrt_errhandler_t errhandlerOf(const proto::Comm* comm) {
  const proto::Comm* c = comm ? comm : proto::commLookup(RRT_COMM_WORLD);
  return c ? c->errhandler : RRT_ERRORS_RETURN;
}

int finishWith(const char* fn, rrt_errhandler_t handler, Status s) {
  if (!failed(s)) return RRT_SUCCESS;
  if (handler == RRT_ERRORS_ARE_FATAL && gState == State::Active) {
    RRT_ERROR("%s: %s (RRT_ERRORS_ARE_FATAL: aborting the job)", fn, statusName(s));
    abortProcess(static_cast<int>(s), fn);
  }
  return static_cast<int>(s);
}

int finish(const char* fn, const proto::Comm* comm, Status s) {
  if (!failed(s)) return RRT_SUCCESS;
  return finishWith(fn, errhandlerOf(comm), s);
}

}  // namespace rrt::api

#include "runtime/api/api_check.h"

#include <cstdint>
#include <cstdlib>

#include "runtime/api/runtime_state.h"

namespace rrt::api {

Status checkActive(const char* fn) {
  if (__builtin_expect(gState == State::Active, 1)) return Status::Ok;
  if (gState == State::Finalized) {
    RRT_WARN("%s: called after rrt_finalize", fn);
    return Status::ErrFinalized;
  }
  RRT_WARN("%s: called before rrt_init", fn);
  return Status::ErrNotInitialized;
}

proto::Comm* checkComm(const char* fn, rrt_comm_t handle) {
  proto::Comm* c = proto::commLookup(handle);
  if (!c) RRT_WARN("%s: invalid communicator %d", fn, handle);
  return c;
}

Status checkRank(const char* fn, const proto::Comm& c, int rank, const char* what, bool allowAny) {
  if (rank >= 0 && rank < c.size) return Status::Ok;
  if (rank == RRT_PROC_NULL || (allowAny && rank == RRT_ANY_SOURCE)) return Status::Ok;
  RRT_WARN("%s: %s %d out of range (communicator size %d)", fn, what, rank, c.size);
  return Status::ErrRank;
}

Status checkRoot(const char* fn, const proto::Comm& c, int root) {
  if (root >= 0 && root < c.size) return Status::Ok;
  RRT_WARN("%s: root %d out of range (communicator size %d)", fn, root, c.size);
  return Status::ErrRoot;
}

Status checkTag(const char* fn, int tag, bool allowAny) {
  if (tag >= 0 && tag <= RRT_TAG_UB) return Status::Ok;
  if (allowAny && tag == RRT_ANY_TAG) return Status::Ok;
  RRT_WARN("%s: invalid tag %d (valid: 0..%d%s)", fn, tag, RRT_TAG_UB,
           allowAny ? " or RRT_ANY_TAG" : "");
  return Status::ErrTag;
}

Status checkType(const char* fn, rrt_datatype_t type, const core::TypeInfo** info) {
  *info = core::typeLookup(type);
  if (*info) return Status::Ok;
  RRT_WARN("%s: invalid datatype %d", fn, type);
  return Status::ErrType;
}

Status checkBuffer(const char* fn, const void* buf, size_t count, const char* what) {
  if (buf || count == 0) return Status::Ok;
  RRT_WARN("%s: %s is NULL with count %zu", fn, what, count);
  return Status::ErrBuffer;
}

Status checkCountBytes(const char* fn, size_t count, size_t typeSize, size_t* bytes) {
  if (typeSize != 0 && count > SIZE_MAX / typeSize) {
    RRT_WARN("%s: count %zu too large", fn, count);
    return Status::ErrCount;
  }
  *bytes = count * typeSize;
  return Status::Ok;
}

int finish(const char* fn, const proto::Comm* comm, Status s) {
  if (!failed(s)) return RRT_SUCCESS;
  const proto::Comm* c = comm ? comm : proto::commLookup(RRT_COMM_WORLD);
  if (c && c->errhandler == RRT_ERRORS_ARE_FATAL && gState == State::Active) {
    RRT_ERROR("%s: %s (RRT_ERRORS_ARE_FATAL: aborting the job)", fn, statusName(s));
    abortProcess(static_cast<int>(s), fn);
  }
  return static_cast<int>(s);
}

}  // namespace rrt::api

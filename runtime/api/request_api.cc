// Completion: wait / test in their single, all, any and some forms, cancel, request_free.
// A completed request is released and the user's handle set to RRT_REQUEST_NULL.
#include <vector>

#include "runtime/api/api_check.h"
#include "runtime/core/progress.h"
#include "runtime/proto/p2p.h"

using namespace rrt;
using core::Request;

namespace {

const rrt_status_t kEmptyStatus{RRT_ANY_SOURCE, RRT_ANY_TAG, RRT_SUCCESS, 0, 0};

// Validates a handle (NULL allowed). Logs and returns false for garbage.
bool validHandle(const char* fn, rrt_request_t r) {
  if (r == RRT_REQUEST_NULL || core::requestValid(r)) return true;
  RRT_WARN("%s: invalid request handle %p", fn, static_cast<void*>(r));
  return false;
}

// Takes the result of a completed request and releases it.
int reap(rrt_request_t* handle, rrt_status_t* status) {
  Request* r = *handle;
  if (status) *status = r->status;
  int err = r->status.error;
  core::requestRelease(r);
  *handle = RRT_REQUEST_NULL;
  return err;
}

// reap, then the C code with the request's communicator's error handler, read first: the
// release may delete a communicator freed while the request ran.
int reapFinish(const char* fn, rrt_request_t* handle, rrt_status_t* status) {
  const rrt_errhandler_t eh = api::errhandlerOf((*handle)->comm);
  return api::finishWith(fn, eh, static_cast<Status>(reap(handle, status)));
}

}  // namespace

extern "C" {

int rrt_wait(rrt_request_t* request, rrt_status_t* status) {
  const char* fn = "rrt_wait";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (!request || !validHandle(fn, *request)) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  if (*request == RRT_REQUEST_NULL) {
    if (status) *status = kEmptyStatus;
    return RRT_SUCCESS;
  }
  Request* r = *request;
  const proto::Comm* c = r->comm;
  if (!r->complete) RRT_API_CHECK(fn, c, core::waitFor([r] { return r->complete; }));
  return reapFinish(fn, request, status);
}

int rrt_test(rrt_request_t* request, int* flag, rrt_status_t* status) {
  const char* fn = "rrt_test";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (!request || !flag || !validHandle(fn, *request)) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  if (*request == RRT_REQUEST_NULL) {
    *flag = 1;
    if (status) *status = kEmptyStatus;
    return RRT_SUCCESS;
  }
  Request* r = *request;
  if (!r->complete) core::progress();
  *flag = r->complete;
  if (!r->complete) return RRT_SUCCESS;
  return reapFinish(fn, request, status);
}

int rrt_waitall(size_t count, rrt_request_t* requests, rrt_status_t* statuses) {
  const char* fn = "rrt_waitall";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (count && !requests) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  for (size_t i = 0; i < count; ++i)
    if (!validHandle(fn, requests[i])) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  // Requests stay complete until reaped, so each poll resumes at the first incomplete one
  // instead of rescanning the whole array (a 64-message window was 64 loads per poll).
  size_t next = 0;
  Status st = core::waitFor([&] {
    while (next < count && (!requests[next] || requests[next]->complete)) ++next;
    return next == count;
  });
  if (st != Status::Ok) RRT_API_FAIL(fn, nullptr, st);
  bool anyError = false;
  const proto::Comm* c = nullptr;
  rrt_errhandler_t eh = RRT_ERRORS_RETURN;
  for (size_t i = 0; i < count; ++i) {
    rrt_status_t* s = statuses ? &statuses[i] : nullptr;
    if (!requests[i]) {
      if (s) *s = kEmptyStatus;
      continue;
    }
    if (!c) eh = api::errhandlerOf(c = requests[i]->comm);  // before reap: it may delete c
    if (reap(&requests[i], s) != RRT_SUCCESS) anyError = true;
  }
  return anyError ? api::finishWith(fn, eh, Status::ErrInStatus) : RRT_SUCCESS;
}

int rrt_testall(size_t count, rrt_request_t* requests, int* flag, rrt_status_t* statuses) {
  const char* fn = "rrt_testall";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if ((count && !requests) || !flag) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  for (size_t i = 0; i < count; ++i)
    if (!validHandle(fn, requests[i])) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  core::progress();
  *flag = 0;
  for (size_t i = 0; i < count; ++i)
    if (requests[i] && !requests[i]->complete) return RRT_SUCCESS;
  *flag = 1;
  return rrt_waitall(count, requests, statuses);
}

int rrt_testany(size_t count, rrt_request_t* requests, int* index, int* flag,
                rrt_status_t* status) {
  const char* fn = "rrt_testany";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if ((count && !requests) || !index || !flag) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  for (size_t i = 0; i < count; ++i)
    if (!validHandle(fn, requests[i])) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  core::progress();
  bool anyActive = false;
  for (size_t i = 0; i < count; ++i) {
    if (!requests[i]) continue;
    anyActive = true;
    if (requests[i]->complete) {
      *index = static_cast<int>(i);
      *flag = 1;
      return reapFinish(fn, &requests[i], status);
    }
  }
  *flag = anyActive ? 0 : 1;
  *index = RRT_UNDEFINED;
  if (!anyActive && status) *status = kEmptyStatus;
  return RRT_SUCCESS;
}

int rrt_waitany(size_t count, rrt_request_t* requests, int* index, rrt_status_t* status) {
  const char* fn = "rrt_waitany";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if ((count && !requests) || !index) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  for (size_t i = 0; i < count; ++i)
    if (!validHandle(fn, requests[i])) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  int flag = 0;
  int rc = RRT_SUCCESS;
  Status st = core::waitFor([&] {
    rc = rrt_testany(count, requests, index, &flag, status);
    return rc != RRT_SUCCESS || flag;
  });
  if (st != Status::Ok) RRT_API_FAIL(fn, nullptr, st);
  return rc;
}

int rrt_waitsome(size_t count, rrt_request_t* requests, int* outcount, int* indices,
                 rrt_status_t* statuses) {
  const char* fn = "rrt_waitsome";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if ((count && (!requests || !indices)) || !outcount) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  for (size_t i = 0; i < count; ++i)
    if (!validHandle(fn, requests[i])) RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  bool anyActive = false;
  for (size_t i = 0; i < count; ++i) anyActive |= requests[i] != RRT_REQUEST_NULL;
  if (!anyActive) {
    *outcount = RRT_UNDEFINED;
    return RRT_SUCCESS;
  }
  Status st = core::waitFor([&] {
    for (size_t i = 0; i < count; ++i)
      if (requests[i] && requests[i]->complete) return true;
    return false;
  });
  if (st != Status::Ok) RRT_API_FAIL(fn, nullptr, st);
  int n = 0;
  bool anyError = false;
  const proto::Comm* c = nullptr;
  rrt_errhandler_t eh = RRT_ERRORS_RETURN;
  for (size_t i = 0; i < count; ++i) {
    if (!requests[i] || !requests[i]->complete) continue;
    if (!c) eh = api::errhandlerOf(c = requests[i]->comm);  // before reap: it may delete c
    indices[n] = static_cast<int>(i);
    if (reap(&requests[i], statuses ? &statuses[n] : nullptr) != RRT_SUCCESS) anyError = true;
    ++n;
  }
  *outcount = n;
  return anyError ? api::finishWith(fn, eh, Status::ErrInStatus) : RRT_SUCCESS;
}

int rrt_cancel(rrt_request_t* request) {
  const char* fn = "rrt_cancel";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (!request || !*request || !core::requestValid(*request))
    RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  RRT_API_CHECK(fn, (*request)->comm, proto::cancel(*request));
  return RRT_SUCCESS;
}

int rrt_request_free(rrt_request_t* request) {
  const char* fn = "rrt_request_free";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (!request || !*request || !core::requestValid(*request))
    RRT_API_FAIL(fn, nullptr, Status::ErrRequest);
  Request* r = *request;
  if (r->complete) core::requestRelease(r);
  else r->userFreed = true;
  *request = RRT_REQUEST_NULL;
  return RRT_SUCCESS;
}

}  // extern "C"

// Requests and their completion: MPI_Wait/Test and their -all/-any/-some forms over rrt's, plus
// what rrt requests do not carry: staging to unpack or free on completion, persistent requests
// (inactive between completions), and MPI_Request_get_status, which must not free.
#include <algorithm>
#include <vector>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
// At namespace scope, not a function-local static: no initialization guard on every lookup.
Table<Request> gRequests;

namespace {

Table<Request>& requests() { return gRequests; }

struct Detached {
  rrt_request_t rr;
  Stage stage;
  size_t bsendBytes;
};
std::vector<Detached>& detached() {
  static std::vector<Detached> d;
  return d;
}

// Reusable scratch arrays for the multi-request calls (no allocation once warm).
std::vector<rrt_request_t> gRr;
std::vector<rrt_status_t> gSt;
std::vector<int> gIdx;
std::vector<Request*> gReq;

// True when the request has nothing in flight: null, inactive persistent.
bool inactive(const Request& r) { return r.rr == RRT_REQUEST_NULL && !r.done; }

// Ends the active operation of *h with rrt status s: unpacks, frees the staging, and frees the
// handle (or makes a persistent one inactive).
void finishOne(MPI_Request* h, Request* r, const rrt_status_t& s) {
  // A receive unpacks the bytes that came; a collective's status carries no byte count, and
  // its buffers are whole when it completes (before: a non-blocking collective into a
  // non-contiguous type unpacked nothing, MPICH coll/nonblocking2's Ibcast).
  r->stage.finish(r->p2p ? s.bytes : static_cast<size_t>(-1));
  r->rr = RRT_REQUEST_NULL;
  r->done = false;
  if (r->kind == ReqKind::Plain) {
    requests().remove(handleIndex(*h, kKindRequest));
    *h = MPI_REQUEST_NULL;
  } else {
    r->started = false;
  }
}

// The rrt handles of count MPI requests into gRr (NULL for null, inactive or already-done ones).
// Returns false on an invalid handle.
bool gather(int count, MPI_Request reqs[]) {
  gRr.assign(static_cast<size_t>(count), RRT_REQUEST_NULL);
  gSt.assign(static_cast<size_t>(count), rrt_status_t{});
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    Request* r = requestGet(reqs[i]);
    if (r == nullptr) return false;
    gRr[i] = r->rr;
  }
  return true;
}

int reqErr(const char* fn) { return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn); }

}  // namespace

MPI_Request requestMake(rrt_request_t rr, MPI_Comm comm, Stage&& st, bool p2p) {
  const int idx = requests().claim();
  Request& r = requests().at(idx);
  r.rr = rr;
  r.comm = comm;
  r.stage = std::move(st);
  r.p2p = p2p;
  return kKindRequest | idx;
}

void requestDetach(rrt_request_t rr, Stage&& st, size_t bsendBytes) {
  detached().push_back(Detached{rr, std::move(st), bsendBytes});
}

void requestReap(bool waitAll, bool bsendOnly) {
  auto& d = detached();
  for (size_t i = 0; i < d.size();) {
    if (bsendOnly && d[i].bsendBytes == 0) {
      ++i;
      continue;
    }
    int flag = 0;
    rrt_status_t s{};
    if (waitAll) {
      rrt_wait(&d[i].rr, &s);
      flag = 1;
    } else {
      rrt_test(&d[i].rr, &flag, &s);
    }
    if (flag) {
      d[i].stage.finish(s.bytes);
      d[i] = std::move(d.back());
      d.pop_back();
    } else {
      ++i;
    }
  }
}

size_t bsendBytesInFlight() {
  size_t n = 0;
  for (auto& x : detached()) n += x.bsendBytes;
  return n;
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Wait);
int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (request == nullptr) return reqErr(__func__);
  if (*request == MPI_REQUEST_NULL) {
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  Request* r = requestGet(*request);
  if (r == nullptr) return reqErr(__func__);
  if (inactive(*r)) {
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  rrt_status_t s{};
  int rc;
  if (r->done) {
    s = r->doneStatus;
    rc = r->doneRc;
  } else {
    rc = rrt_wait(&r->rr, &s);
  }
  MPI_Comm comm = r->comm;
  finishOne(request, r, s);
  statusFromRrt(s, status, false);
  if (!detached().empty()) requestReap(false, false);
  return check(comm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Test);
int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (request == nullptr || flag == nullptr) return reqErr(__func__);
  if (!detached().empty()) requestReap(false, false);
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  Request* r = requestGet(*request);
  if (r == nullptr) return reqErr(__func__);
  if (inactive(*r)) {
    *flag = 1;
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  rrt_status_t s{};
  int rc;
  if (r->done) {
    s = r->doneStatus;
    rc = r->doneRc;
    *flag = 1;
  } else {
    rc = rrt_test(&r->rr, flag, &s);
  }
  if (!*flag) return check(r->comm, rc, __func__);
  MPI_Comm comm = r->comm;
  finishOne(request, r, s);
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Request_get_status);
int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  Request* r = requestGet(request);
  if (r == nullptr) return reqErr(__func__);
  if (inactive(*r)) {
    *flag = 1;
    statusEmpty(status, false);
    return MPI_SUCCESS;
  }
  if (!r->done) {
    rrt_status_t s{};
    int f = 0;
    int rc = rrt_test(&r->rr, &f, &s);
    if (f) {  // rrt freed its request; keep the outcome for the MPI_Wait that will follow
      r->done = true;
      r->doneRc = rc;
      r->doneStatus = s;
      r->rr = RRT_REQUEST_NULL;
    } else if (rc != RRT_SUCCESS) {
      return check(r->comm, rc, __func__);
    }
  }
  *flag = r->done;
  if (r->done) statusFromRrt(r->doneStatus, status, false);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Waitall);
int PMPI_Waitall(int count, MPI_Request requests_[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && requests_ == nullptr)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  // One lookup per handle (kept in gReq; nullptr: null or inactive), then one pass to finish.
  const size_t n = static_cast<size_t>(count);
  if (gReq.size() < n) gReq.resize(n);
  if (gRr.size() < n) gRr.resize(n);
  if (gSt.size() < n) gSt.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Request* r = nullptr;
    if (requests_[i] != MPI_REQUEST_NULL) {
      r = requestGet(requests_[i]);
      if (r == nullptr) return reqErr(__func__);
      if (inactive(*r)) r = nullptr;
    }
    gReq[i] = r;
    gRr[i] = r ? r->rr : RRT_REQUEST_NULL;
  }
  int rc = rrt_waitall(n, gRr.data(), gSt.data());
  // rrt fills every status unless it failed before completing anything.
  if (rc != RRT_SUCCESS && rc != RRT_ERR_IN_STATUS)
    std::fill(gSt.begin(), gSt.begin() + count, rrt_status_t{});
  MPI_Comm errComm = MPI_COMM_WORLD;
  bool anyFailed = false;
  for (size_t i = 0; i < n && !anyFailed; ++i) {  // every status gets MPI_ERROR if any failed
    const Request* r = gReq[i];
    if (r == nullptr) continue;
    int e = r->done ? (r->doneRc ? r->doneRc : r->doneStatus.error) : gSt[i].error;
    if (e != RRT_SUCCESS) anyFailed = true, errComm = r->comm;
  }
  const bool setError = rc == RRT_ERR_IN_STATUS || anyFailed;
  for (size_t i = 0; i < n; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    Request* r = gReq[i];
    if (r == nullptr) {
      statusEmpty(st, rc == RRT_ERR_IN_STATUS);
      continue;
    }
    rrt_status_t s = r->done ? r->doneStatus : gSt[i];
    if (r->done && r->doneRc != RRT_SUCCESS && s.error == RRT_SUCCESS) s.error = r->doneRc;
    finishOne(&requests_[i], r, s);
    statusFromRrt(s, st, setError);
  }
  if (!detached().empty()) requestReap(false, false);
  if (anyFailed || rc == RRT_ERR_IN_STATUS) return raise(errComm, MPI_ERR_IN_STATUS, __func__);
  return check(errComm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Testall);
int PMPI_Testall(int count, MPI_Request requests_[], int* flag, MPI_Status statuses[]) {
  if (count < 0 || flag == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!detached().empty()) requestReap(false, false);
  if (!gather(count, requests_)) return reqErr(__func__);
  // Requests already seen done by MPI_Request_get_status are complete as far as rrt knows.
  int rc = rrt_testall(static_cast<size_t>(count), gRr.data(), flag, gSt.data());
  if (!*flag) {
    // rrt leaves every request in place when not all are done (MPI semantics).
    return rc == RRT_SUCCESS ? MPI_SUCCESS : check(MPI_COMM_WORLD, rc, __func__);
  }
  bool anyFailed = false;
  MPI_Comm errComm = MPI_COMM_WORLD;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    Request* r = requests_[i] == MPI_REQUEST_NULL ? nullptr : requestGet(requests_[i]);
    if (r == nullptr || inactive(*r)) {
      statusEmpty(st, rc == RRT_ERR_IN_STATUS);
      continue;
    }
    rrt_status_t s = r->done ? r->doneStatus : gSt[i];
    if (s.error != RRT_SUCCESS && !anyFailed) {
      anyFailed = true;
      errComm = r->comm;
    }
    finishOne(&requests_[i], r, s);
    statusFromRrt(s, st, rc == RRT_ERR_IN_STATUS || anyFailed);
  }
  if (anyFailed || rc == RRT_ERR_IN_STATUS) return raise(errComm, MPI_ERR_IN_STATUS, __func__);
  return check(errComm, rc, __func__);
}

// A request already done (MPI_Request_get_status) wins at once in the -any/-some calls.
static int firstDone(int count, MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    Request* r = requestGet(reqs[i]);
    if (r && r->done) return i;
  }
  return -1;
}

RRT_MPI_WEAK_ALIAS(MPI_Waitany);
int PMPI_Waitany(int count, MPI_Request requests_[], int* index, MPI_Status* status) {
  if (count < 0 || index == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!gather(count, requests_)) return reqErr(__func__);
  int idx = firstDone(count, requests_);
  rrt_status_t s{};
  int rc = RRT_SUCCESS;
  if (idx >= 0) {
    Request* r = requestGet(requests_[idx]);
    s = r->doneStatus;
    rc = r->doneRc;
  } else {
    rc = rrt_waitany(static_cast<size_t>(count), gRr.data(), &idx, &s);
  }
  if (idx == RRT_UNDEFINED || idx < 0) {
    *index = MPI_UNDEFINED;
    statusEmpty(status, false);
    return check(MPI_COMM_WORLD, rc, __func__);
  }
  Request* r = requestGet(requests_[idx]);
  MPI_Comm comm = r->comm;
  finishOne(&requests_[idx], r, s);
  *index = idx;
  statusFromRrt(s, status, false);
  if (!detached().empty()) requestReap(false, false);
  return check(comm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Testany);
int PMPI_Testany(int count, MPI_Request requests_[], int* index, int* flag, MPI_Status* status) {
  if (count < 0 || index == nullptr || flag == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!detached().empty()) requestReap(false, false);
  if (!gather(count, requests_)) return reqErr(__func__);
  int idx = firstDone(count, requests_);
  rrt_status_t s{};
  int rc = RRT_SUCCESS;
  if (idx >= 0) {
    Request* r = requestGet(requests_[idx]);
    s = r->doneStatus;
    rc = r->doneRc;
    *flag = 1;
  } else {
    rc = rrt_testany(static_cast<size_t>(count), gRr.data(), &idx, flag, &s);
  }
  if (!*flag) {
    *index = MPI_UNDEFINED;
    return check(MPI_COMM_WORLD, rc, __func__);
  }
  if (idx == RRT_UNDEFINED || idx < 0) {
    *index = MPI_UNDEFINED;
    statusEmpty(status, false);
    return check(MPI_COMM_WORLD, rc, __func__);
  }
  Request* r = requestGet(requests_[idx]);
  MPI_Comm comm = r->comm;
  finishOne(&requests_[idx], r, s);
  *index = idx;
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

// Completes what rrt reports in gIdx/gSt (n entries) and fills the outputs.
static int finishSome(int n, MPI_Request requests_[], int indices[], MPI_Status statuses[],
                      int rc, const char* fn) {
  bool anyFailed = false;
  MPI_Comm errComm = MPI_COMM_WORLD;
  for (int k = 0; k < n; ++k) {
    int i = gIdx[k];
    Request* r = requestGet(requests_[i]);
    rrt_status_t s = r->done ? r->doneStatus : gSt[k];
    if (s.error != RRT_SUCCESS && !anyFailed) {
      anyFailed = true;
      errComm = r->comm;
    }
    finishOne(&requests_[i], r, s);
    indices[k] = i;
    if (statuses != MPI_STATUSES_IGNORE) statusFromRrt(s, &statuses[k], true);
  }
  if (anyFailed || rc == RRT_ERR_IN_STATUS) return raise(errComm, MPI_ERR_IN_STATUS, fn);
  return check(errComm, rc, fn);
}

RRT_MPI_WEAK_ALIAS(MPI_Waitsome);
int PMPI_Waitsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  if (incount < 0 || outcount == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!gather(incount, requests_)) return reqErr(__func__);
  gIdx.assign(static_cast<size_t>(incount) + 1, 0);
  int n = 0, rc = RRT_SUCCESS;
  for (int i = 0; i < incount; ++i) {  // already-done ones first, without waiting
    Request* r = requests_[i] == MPI_REQUEST_NULL ? nullptr : requestGet(requests_[i]);
    if (r && r->done) gIdx[n++] = i;
  }
  if (n == 0) {
    rc = rrt_waitsome(static_cast<size_t>(incount), gRr.data(), &n, gIdx.data(), gSt.data());
    if (n == RRT_UNDEFINED) {
      *outcount = MPI_UNDEFINED;
      return check(MPI_COMM_WORLD, rc, __func__);
    }
  }
  *outcount = n;
  int e = finishSome(n, requests_, indices, statuses, rc, __func__);
  if (!detached().empty()) requestReap(false, false);
  return e;
}

// rrt has no testsome: testing each active request is exactly MPI's definition.
RRT_MPI_WEAK_ALIAS(MPI_Testsome);
int PMPI_Testsome(int incount, MPI_Request requests_[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  if (incount < 0 || outcount == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!detached().empty()) requestReap(false, false);
  if (!gather(incount, requests_)) return reqErr(__func__);
  gIdx.assign(static_cast<size_t>(incount) + 1, 0);
  int n = 0, active = 0, rc = RRT_SUCCESS;
  for (int i = 0; i < incount; ++i) {
    Request* r = requests_[i] == MPI_REQUEST_NULL ? nullptr : requestGet(requests_[i]);
    if (r == nullptr || inactive(*r)) continue;
    ++active;
    if (r->done) {
      gIdx[n++] = i;
      continue;
    }
    int flag = 0;
    rrt_status_t s{};
    int trc = rrt_test(&r->rr, &flag, &s);
    if (flag) {
      r->done = true;
      r->doneRc = trc;
      r->doneStatus = s;
      if (trc != RRT_SUCCESS && r->doneStatus.error == RRT_SUCCESS) r->doneStatus.error = trc;
      r->rr = RRT_REQUEST_NULL;
      gIdx[n++] = i;
    } else if (trc != RRT_SUCCESS) {
      rc = trc;
    }
  }
  if (active == 0) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *outcount = n;
  return finishSome(n, requests_, indices, statuses, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Request_free);
int PMPI_Request_free(MPI_Request* request) {
  if (request == nullptr) return reqErr(__func__);
  Request* r = requestGet(*request);
  if (r == nullptr) return reqErr(__func__);
  if (r->rr != RRT_REQUEST_NULL) {
    if (r->stage.empty()) {
      if (int e = check(r->comm, rrt_request_free(&r->rr), __func__)) return e;
    } else {
      requestDetach(r->rr, std::move(r->stage), 0);  // staging must outlive the operation
    }
  }
  if (r->kind != ReqKind::Plain) typeRelease(r->type);
  requests().remove(handleIndex(*request, kKindRequest));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// Receives and sends alike (rrt_cancel). A request whose outcome the layer already holds (a
// buffered send, done at once; MPI_Request_get_status saw it complete) completed normally;
// collective and RMA requests are not cancelled (MPI makes that erroneous).
RRT_MPI_WEAK_ALIAS(MPI_Cancel);
int PMPI_Cancel(MPI_Request* request) {
  if (request == nullptr) return reqErr(__func__);
  Request* r = requestGet(*request);
  if (r == nullptr) return reqErr(__func__);
  if (r->rr == RRT_REQUEST_NULL || !r->p2p) return MPI_SUCCESS;
  return check(r->comm, rrt_cancel(&r->rr), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Test_cancelled);
int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (status == MPI_STATUS_IGNORE || flag == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = status->rrt_cancelled_ != 0;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Status_set_cancelled);
int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (status == MPI_STATUS_IGNORE) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  status->rrt_cancelled_ = flag != 0;
  return MPI_SUCCESS;
}

// ---- persistent requests ----------------------------------------------------------------------

static int persistent(const void* buf, int count, MPI_Datatype type, int peer, int tag,
                      MPI_Comm comm, ReqKind kind, int mode, MPI_Request* request, const char* fn) {
  int err;
  if (!commCheck(comm, fn, &err)) return err;
  if (typeGet(type) == nullptr) return raise(comm, MPI_ERR_TYPE, fn);
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn);
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, fn);
  Request r;
  r.kind = kind;
  r.comm = comm;
  r.p2p = true;
  r.buf = buf;
  r.count = count;
  r.type = type;
  r.peer = peer;
  r.tag = tag;
  r.mode = mode;
  typeRetain(type);
  *request = kKindRequest | requests().add(std::move(r));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Send_init);
int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return persistent(buf, count, datatype, dest, tag, comm, ReqKind::PersistentSend, 0, request,
                    __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ssend_init);
int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return persistent(buf, count, datatype, dest, tag, comm, ReqKind::PersistentSend, 1, request,
                    __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Rsend_init);
int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return persistent(buf, count, datatype, dest, tag, comm, ReqKind::PersistentSend, 2, request,
                    __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Recv_init);
int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return persistent(buf, count, datatype, source, tag, comm, ReqKind::PersistentRecv, 0, request,
                    __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Start);
int PMPI_Start(MPI_Request* request) {
  if (request == nullptr) return reqErr(__func__);
  Request* r = requestGet(*request);
  if (r == nullptr || r->kind == ReqKind::Plain) return reqErr(__func__);
  if (r->rr != RRT_REQUEST_NULL || r->done) return raise(r->comm, MPI_ERR_REQUEST, __func__);
  r->started = true;
  if (r->kind == ReqKind::PersistentSend)
    return postSend(r->buf, r->count, r->type, r->peer, r->tag, r->comm, r->mode, &r->rr,
                    &r->stage, __func__);
  return postRecv(const_cast<void*>(r->buf), r->count, r->type, r->peer, r->tag, r->comm, &r->rr,
                  &r->stage, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Startall);
int PMPI_Startall(int count, MPI_Request requests_[]) {
  for (int i = 0; i < count; ++i)
    if (int e = PMPI_Start(&requests_[i])) return e;
  return MPI_SUCCESS;
}

}  // extern "C"

// Point-to-point entry points: argument checks, then one call into runtime/proto.
#include "runtime/api/api_check.h"
#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"

using namespace rrt;

namespace {

// The common checks of a send or receive; fills comm and byte count. Inlined into each entry
// point (as isendImpl is), so the fast path makes no call with ten arguments on the stack.
[[gnu::always_inline]] inline Status checkP2p(const char* fn, rrt_comm_t comm, const void* buf,
                                              size_t count, rrt_datatype_t type, int peer, int tag,
                                              bool recv, proto::Comm** c, size_t* bytes) {
  RRT_TRY(api::checkActive(fn));
  *c = api::checkComm(fn, comm);
  if (!*c) return Status::ErrComm;
  const core::TypeInfo* info;
  RRT_TRY(api::checkType(fn, type, &info));
  RRT_TRY(api::checkCountBytes(fn, count, info->size, bytes));
  RRT_TRY(api::checkBuffer(fn, buf, *bytes, "buffer"));
  RRT_TRY(api::checkRank(fn, **c, peer, recv ? "source" : "destination", recv));
  RRT_TRY(api::checkTag(fn, tag, recv));
  return Status::Ok;
}

int sendImpl(const char* fn, const void* buf, size_t count, rrt_datatype_t type, int dest,
             int tag, rrt_comm_t comm, uint8_t flags) {
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p(fn, comm, buf, count, type, dest, tag, false, &c, &bytes);
  if (st != Status::Ok) return api::finish(fn, c, st);
  if (dest == RRT_PROC_NULL) return RRT_SUCCESS;
  if (!flags && !gpu::isDevice(buf, bytes) &&
      proto::engine().trySendInline(*c, c->ctx, buf, bytes, dest, tag) == Status::Ok)
    return RRT_SUCCESS;
  core::Request* r;
  RRT_API_CHECK(fn, c, proto::isend(*c, c->ctx, buf, bytes, dest, tag, flags, &r));
  return api::finish(fn, c, proto::waitRelease(r, nullptr));
}

[[gnu::always_inline]] inline int isendImpl(const char* fn, const void* buf, size_t count,
                                            rrt_datatype_t type, int dest, int tag, rrt_comm_t comm,
                                            uint8_t flags, rrt_request_t* request) {
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p(fn, comm, buf, count, type, dest, tag, false, &c, &bytes);
  if (st == Status::Ok && !request) st = Status::ErrArg;
  if (st != Status::Ok) return api::finish(fn, c, st);
  core::Request* r;
  RRT_API_CHECK(fn, c, proto::isend(*c, c->ctx, buf, bytes, dest, tag, flags, &r));
  *request = r;
  return RRT_SUCCESS;
}

}  // namespace

extern "C" {

int rrt_send(const void* buf, size_t count, rrt_datatype_t type, int dest, int tag,
             rrt_comm_t comm) {
  return sendImpl("rrt_send", buf, count, type, dest, tag, comm, 0);
}

int rrt_ssend(const void* buf, size_t count, rrt_datatype_t type, int dest, int tag,
              rrt_comm_t comm) {
  return sendImpl("rrt_ssend", buf, count, type, dest, tag, comm, core::kSendSync);
}

int rrt_isend(const void* buf, size_t count, rrt_datatype_t type, int dest, int tag,
              rrt_comm_t comm, rrt_request_t* request) {
  return isendImpl("rrt_isend", buf, count, type, dest, tag, comm, 0, request);
}

int rrt_issend(const void* buf, size_t count, rrt_datatype_t type, int dest, int tag,
               rrt_comm_t comm, rrt_request_t* request) {
  return isendImpl("rrt_issend", buf, count, type, dest, tag, comm, core::kSendSync, request);
}

int rrt_irecv(void* buf, size_t count, rrt_datatype_t type, int source, int tag, rrt_comm_t comm,
              rrt_request_t* request) {
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p("rrt_irecv", comm, buf, count, type, source, tag, true, &c, &bytes);
  if (st == Status::Ok && !request) st = Status::ErrArg;
  if (st != Status::Ok) return api::finish("rrt_irecv", c, st);
  core::Request* r;
  RRT_API_CHECK("rrt_irecv", c, proto::irecv(*c, c->ctx, buf, bytes, source, tag, &r));
  *request = r;
  return RRT_SUCCESS;
}

int rrt_recv(void* buf, size_t count, rrt_datatype_t type, int source, int tag, rrt_comm_t comm,
             rrt_status_t* status) {
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p("rrt_recv", comm, buf, count, type, source, tag, true, &c, &bytes);
  if (st != Status::Ok) return api::finish("rrt_recv", c, st);
  core::Request* r;
  RRT_API_CHECK("rrt_recv", c, proto::irecv(*c, c->ctx, buf, bytes, source, tag, &r));
  return api::finish("rrt_recv", c, proto::waitRelease(r, status));
}

int rrt_sendrecv(const void* sendbuf, size_t sendcount, rrt_datatype_t sendtype, int dest,
                 int sendtag, void* recvbuf, size_t recvcount, rrt_datatype_t recvtype, int source,
                 int recvtag, rrt_comm_t comm, rrt_status_t* status) {
  const char* fn = "rrt_sendrecv";
  proto::Comm* c = nullptr;
  size_t sbytes = 0, rbytes = 0;
  Status st = checkP2p(fn, comm, recvbuf, recvcount, recvtype, source, recvtag, true, &c, &rbytes);
  if (st == Status::Ok)
    st = checkP2p(fn, comm, sendbuf, sendcount, sendtype, dest, sendtag, false, &c, &sbytes);
  if (st != Status::Ok) return api::finish(fn, c, st);
  core::Request *rr, *sr;
  RRT_API_CHECK(fn, c, proto::irecv(*c, c->ctx, recvbuf, rbytes, source, recvtag, &rr));
  st = proto::isend(*c, c->ctx, sendbuf, sbytes, dest, sendtag, 0, &sr);
  if (st != Status::Ok) {
    (void)proto::cancel(rr);
    (void)proto::waitRelease(rr, nullptr);
    return api::finish(fn, c, st);
  }
  Status ss = proto::waitRelease(sr, nullptr);
  Status rs = proto::waitRelease(rr, status);
  return api::finish(fn, c, ss != Status::Ok ? ss : rs);
}

int rrt_iprobe(int source, int tag, rrt_comm_t comm, int* flag, rrt_status_t* status) {
  const char* fn = "rrt_iprobe";
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p(fn, comm, nullptr, 0, RRT_BYTE, source, tag, true, &c, &bytes);
  if (st == Status::Ok && !flag) st = Status::ErrArg;
  if (st != Status::Ok) return api::finish(fn, c, st);
  core::progress();
  bool found = false;
  RRT_API_CHECK(fn, c, proto::iprobe(*c, c->ctx, source, tag, &found, status));
  *flag = found;
  return RRT_SUCCESS;
}

int rrt_improbe(int source, int tag, rrt_comm_t comm, int* flag, rrt_message_t* message,
                rrt_status_t* status) {
  const char* fn = "rrt_improbe";
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p(fn, comm, nullptr, 0, RRT_BYTE, source, tag, true, &c, &bytes);
  if (st == Status::Ok && (!flag || !message)) st = Status::ErrArg;
  if (st != Status::Ok) return api::finish(fn, c, st);
  if (source == RRT_PROC_NULL) {
    *flag = 1;
    *message = RRT_MESSAGE_NO_PROC;
    if (status) *status = rrt_status_t{RRT_PROC_NULL, RRT_ANY_TAG, RRT_SUCCESS, 0, 0};
    return RRT_SUCCESS;
  }
  core::progress();
  core::Request* m = nullptr;
  RRT_API_CHECK(fn, c, proto::improbe(*c, c->ctx, source, tag, &m, status));
  *flag = m != nullptr;
  *message = m ? m : RRT_MESSAGE_NULL;
  return RRT_SUCCESS;
}

int rrt_mprobe(int source, int tag, rrt_comm_t comm, rrt_message_t* message,
               rrt_status_t* status) {
  int flag = 0;
  int rc = rrt_improbe(source, tag, comm, &flag, message, status);
  if (rc != RRT_SUCCESS || flag) return rc;
  proto::Comm* c = api::checkComm("rrt_mprobe", comm);
  core::Request* m = nullptr;
  Status st = core::waitFor([&] {
    return proto::improbe(*c, c->ctx, source, tag, &m, status) == Status::Ok && m != nullptr;
  });
  if (st == Status::Ok) *message = m;
  return api::finish("rrt_mprobe", c, st);
}

int rrt_imrecv(void* buf, size_t count, rrt_datatype_t type, rrt_message_t* message,
               rrt_request_t* request) {
  const char* fn = "rrt_imrecv";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  if (!message || !request) RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  rrt_message_t m = *message;
  if (m == RRT_MESSAGE_NULL ||
      (m != RRT_MESSAGE_NO_PROC && (m->magic != core::kRequestMagic || m->kind != core::ReqKind::Recv ||
                                    !(m->flags & core::kMatchedProbe)))) {
    RRT_WARN("%s: message is not one a matched probe returned", fn);
    RRT_API_FAIL(fn, nullptr, Status::ErrArg);
  }
  proto::Comm* c = m == RRT_MESSAGE_NO_PROC ? nullptr : m->comm;
  const core::TypeInfo* info;
  size_t bytes = 0;
  RRT_API_CHECK(fn, c, api::checkType(fn, type, &info));
  RRT_API_CHECK(fn, c, api::checkCountBytes(fn, count, info->size, &bytes));
  RRT_API_CHECK(fn, c, api::checkBuffer(fn, buf, bytes, "buffer"));
  core::Request* r;
  if (m == RRT_MESSAGE_NO_PROC) {
    // As a receive from RRT_PROC_NULL: complete at once.
    RRT_API_CHECK(fn, c, proto::irecv(*proto::commLookup(RRT_COMM_SELF), 0, buf, 0, RRT_PROC_NULL,
                                      RRT_ANY_TAG, &r));
  } else {
    RRT_API_CHECK(fn, c, proto::imrecv(m, buf, bytes, &r));
  }
  *message = RRT_MESSAGE_NULL;
  *request = r;
  return RRT_SUCCESS;
}

int rrt_mrecv(void* buf, size_t count, rrt_datatype_t type, rrt_message_t* message,
              rrt_status_t* status) {
  rrt_request_t r;
  int rc = rrt_imrecv(buf, count, type, message, &r);
  if (rc != RRT_SUCCESS) return rc;
  // The handler before the wait: the release may drop the last hold on a freed communicator.
  const rrt_errhandler_t handler = api::errhandlerOf(r->comm);
  return api::finishWith("rrt_mrecv", handler, proto::waitRelease(r, status));
}

int rrt_probe(int source, int tag, rrt_comm_t comm, rrt_status_t* status) {
  const char* fn = "rrt_probe";
  proto::Comm* c = nullptr;
  size_t bytes = 0;
  Status st = checkP2p(fn, comm, nullptr, 0, RRT_BYTE, source, tag, true, &c, &bytes);
  if (st != Status::Ok) return api::finish(fn, c, st);
  bool found = false;
  RRT_API_CHECK(fn, c, proto::iprobe(*c, c->ctx, source, tag, &found, status));
  if (found) return RRT_SUCCESS;
  st = core::waitFor([&] {
    return proto::iprobe(*c, c->ctx, source, tag, &found, status) == Status::Ok && found;
  });
  return api::finish(fn, c, st);
}

}  // extern "C"

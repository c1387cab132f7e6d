// Point-to-point entry points: argument checks, then one call into runtime/proto.
#include "runtime/api/api_check.h"
#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"

using namespace rrt;

namespace {

// The common checks of a send or receive; fills comm and byte count.
Status checkP2p(const char* fn, rrt_comm_t comm, const void* buf, size_t count,
                rrt_datatype_t type, int peer, int tag, bool recv, proto::Comm** c, size_t* bytes) {
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

int isendImpl(const char* fn, const void* buf, size_t count, rrt_datatype_t type, int dest,
              int tag, rrt_comm_t comm, uint8_t flags, rrt_request_t* request) {
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

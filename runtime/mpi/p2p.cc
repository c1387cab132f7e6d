// Point-to-point: MPI's send modes and receives over rrt_send/rrt_recv and their non-blocking
// twins. Predefined and dense datatypes go straight through; others are packed into (or
// received into and unpacked from) a temporary buffer. Buffered sends copy into memory the
// layer owns and complete locally, with MPI_Buffer_attach's size as the limit.
#include <cstring>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

// Checks shared by every call: comm, committed datatype, count. Returns the type, or nullptr
// with *err set (after the error handler ran).
Type* checkArgs(MPI_Comm comm, Comm** c, MPI_Datatype type, int count, const char* fn, int* err) {
  *c = commCheck(comm, fn, err);
  if (*c == nullptr) return nullptr;
  Type* t = typeGet(type);
  if (t == nullptr || !t->committed) {
    *err = raise(comm, MPI_ERR_TYPE, fn);
    return nullptr;
  }
  if (count < 0) {
    *err = raise(comm, MPI_ERR_COUNT, fn);
    return nullptr;
  }
  return t;
}

struct Attached {
  void* buf = nullptr;
  size_t size = 0;
  bool present = false;
} gAttached;

}  // namespace

int postSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             int mode, rrt_request_t* rr, Stage* st, const char* fn) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, type, count, fn, &err);
  if (!t) return err;
  RrtBuf b = stageIn(*st, *t, buf, static_cast<size_t>(count));
  int rc = mode == 1 ? rrt_issend(b.ptr, b.count, b.type, dest, tag, c->rc, rr)
                     : rrt_isend(b.ptr, b.count, b.type, dest, tag, c->rc, rr);
  return check(comm, rc, fn);
}

int postRecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             rrt_request_t* rr, Stage* st, const char* fn) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, type, count, fn, &err);
  if (!t) return err;
  RrtBuf b = stageOut(*st, *t, buf, static_cast<size_t>(count), false);
  return check(comm, rrt_irecv(b.ptr, b.count, b.type, source, tag, c->rc, rr), fn);
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

static int blockingSend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                        MPI_Comm comm, bool sync, const char* fn) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, type, count, fn, &err);
  if (!t) return err;
  Stage st;
  RrtBuf b = stageIn(st, *t, buf, static_cast<size_t>(count));
  int rc = sync ? rrt_ssend(b.ptr, b.count, b.type, dest, tag, c->rc)
                : rrt_send(b.ptr, b.count, b.type, dest, tag, c->rc);
  return check(comm, rc, fn);
}

static int nonblockingSend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, int mode, MPI_Request* request, const char* fn) {
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, fn);
  // Fast path (predefined type, valid handles): straight to rrt, nothing staged. It halved the
  // layer's instructions per MPI_Isend of a small message (callgrind, mpi_bw 8 B).
  const Comm* c = commGet(comm);
  const Type* t = typeGet(type);
  if (c != nullptr && t != nullptr && t->predefined && count >= 0) {
    rrt_request_t rr = RRT_REQUEST_NULL;
    const int rc = mode == 1 ? rrt_issend(buf, static_cast<size_t>(count), t->rrtType, dest, tag, c->rc, &rr)
                             : rrt_isend(buf, static_cast<size_t>(count), t->rrtType, dest, tag, c->rc, &rr);
    if (rc != RRT_SUCCESS) return check(comm, rc, fn);
    *request = requestMake(rr, comm, Stage{}, true);
    return MPI_SUCCESS;
  }
  Stage st;
  rrt_request_t rr = RRT_REQUEST_NULL;
  if (int e = postSend(buf, count, type, dest, tag, comm, mode, &rr, &st, fn)) return e;
  *request = requestMake(rr, comm, std::move(st), true);
  return MPI_SUCCESS;
}

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Send);
int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blockingSend(buf, count, datatype, dest, tag, comm, false, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Ssend);
int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  return blockingSend(buf, count, datatype, dest, tag, comm, true, __func__);
}

// A ready send may be a standard send (MPI 3.1 section 3.4).
RRT_MPI_WEAK_ALIAS(MPI_Rsend);
int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  return blockingSend(buf, count, datatype, dest, tag, comm, false, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Isend);
int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblockingSend(buf, count, datatype, dest, tag, comm, 0, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Issend);
int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
  return nonblockingSend(buf, count, datatype, dest, tag, comm, 1, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Irsend);
int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
  return nonblockingSend(buf, count, datatype, dest, tag, comm, 2, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Recv);
int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, datatype, count, __func__, &err);
  if (!t) return err;
  Stage st;
  RrtBuf b = stageOut(st, *t, buf, static_cast<size_t>(count), false);
  rrt_status_t s{};
  int rc = rrt_recv(b.ptr, b.count, b.type, source, tag, c->rc, &s);
  st.finish(s.bytes);
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Irecv);
int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, __func__);
  const Comm* c = commGet(comm);
  const Type* t = typeGet(datatype);
  if (c != nullptr && t != nullptr && t->predefined && count >= 0) {  // as nonblockingSend
    rrt_request_t rr = RRT_REQUEST_NULL;
    const int rc = rrt_irecv(buf, static_cast<size_t>(count), t->rrtType, source, tag, c->rc, &rr);
    if (rc != RRT_SUCCESS) return check(comm, rc, __func__);
    *request = requestMake(rr, comm, Stage{}, true);
    return MPI_SUCCESS;
  }
  Stage st;
  rrt_request_t rr = RRT_REQUEST_NULL;
  if (int e = postRecv(buf, count, datatype, source, tag, comm, &rr, &st, __func__)) return e;
  *request = requestMake(rr, comm, std::move(st), true);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Sendrecv);
int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  int err;
  Comm* c;
  Type* st_ = checkArgs(comm, &c, sendtype, sendcount, __func__, &err);
  if (!st_) return err;
  Type* rt = checkArgs(comm, &c, recvtype, recvcount, __func__, &err);
  if (!rt) return err;
  Stage st;
  RrtBuf sb = stageIn(st, *st_, sendbuf, static_cast<size_t>(sendcount));
  RrtBuf rb = stageOut(st, *rt, recvbuf, static_cast<size_t>(recvcount), false);
  rrt_status_t s{};
  int rc = rrt_sendrecv(sb.ptr, sb.count, sb.type, dest, sendtag, rb.ptr, rb.count, rb.type,
                        source, recvtag, c->rc, &s);
  st.finish(s.bytes);
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

// The outgoing data is copied first, so the receive can land in the same buffer.
RRT_MPI_WEAK_ALIAS(MPI_Sendrecv_replace);
int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, datatype, count, __func__, &err);
  if (!t) return err;
  Stage st;
  size_t bytes = t->size * static_cast<size_t>(count);
  char* copy = st.temp(bytes);
  typePack(*t, buf, static_cast<size_t>(count), copy);
  RrtBuf rb = stageOut(st, *t, buf, static_cast<size_t>(count), false);
  rrt_status_t s{};
  int rc = rrt_sendrecv(copy, bytes, RRT_BYTE, dest, sendtag, rb.ptr, rb.count, rb.type, source,
                        recvtag, c->rc, &s);
  st.finish(s.bytes);
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

}  // extern "C"

// ---- matched probe ---------------------------------------------------------------------------

namespace rrt::mpi {
namespace {
struct Message {
  rrt_message_t m = RRT_MESSAGE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler the receive reports to
};
Table<Message>& messages() {
  static Table<Message> t;
  return t;
}

int probed(rrt_message_t m, MPI_Comm comm, const rrt_status_t& s, MPI_Message* message,
           MPI_Status* status) {
  *message = m == RRT_MESSAGE_NO_PROC ? MPI_MESSAGE_NO_PROC
                                      : kKindMessage | messages().add(Message{m, comm});
  statusFromRrt(s, status, false);
  return MPI_SUCCESS;
}

// The receive of a probed message: *message becomes MPI_MESSAGE_NULL; request == nullptr:
// blocking (MPI_Mrecv).
int mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
          MPI_Request* request, const char* fn) {
  if (!message) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  Message msg{RRT_MESSAGE_NO_PROC, MPI_COMM_WORLD};
  if (*message != MPI_MESSAGE_NO_PROC) {
    const int idx = handleIndex(*message, kKindMessage);
    Message* m = messages().get(idx);
    if (!m) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, fn);  // MPI_MESSAGE_NULL or not a message
    msg = *m;
    messages().remove(idx);
  }
  *message = MPI_MESSAGE_NULL;
  int err;
  Comm* c;
  Type* t = checkArgs(msg.comm, &c, datatype, count, fn, &err);
  if (!t) return err;
  Stage st;
  RrtBuf b = stageOut(st, *t, buf, static_cast<size_t>(count), false);
  if (request) {
    rrt_request_t rr;
    int rc = rrt_imrecv(b.ptr, b.count, b.type, &msg.m, &rr);
    if (rc != RRT_SUCCESS) return check(msg.comm, rc, fn);
    *request = requestMake(rr, msg.comm, std::move(st), true);
    return MPI_SUCCESS;
  }
  rrt_status_t s{};
  int rc = rrt_mrecv(b.ptr, b.count, b.type, &msg.m, &s);
  st.finish(s.bytes);
  statusFromRrt(s, status, false);
  return check(msg.comm, rc, fn);
}
}  // namespace
}  // namespace rrt::mpi

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Improbe);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (!flag || !message) return raise(comm, MPI_ERR_ARG, __func__);
  rrt_status_t s{};
  rrt_message_t m = RRT_MESSAGE_NULL;
  int rc = rrt_improbe(source, tag, c->rc, flag, &m, &s);
  if (rc != RRT_SUCCESS) return check(comm, rc, __func__);
  return *flag ? probed(m, comm, s, message, status) : MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Mprobe);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (!message) return raise(comm, MPI_ERR_ARG, __func__);
  rrt_status_t s{};
  rrt_message_t m = RRT_MESSAGE_NULL;
  int rc = rrt_mprobe(source, tag, c->rc, &m, &s);
  if (rc != RRT_SUCCESS) return check(comm, rc, __func__);
  return probed(m, comm, s, message, status);
}

RRT_MPI_WEAK_ALIAS(MPI_Mrecv);
int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) {
  return mrecv(buf, count, datatype, message, status, nullptr, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Imrecv);
int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) {
  if (!request) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  return mrecv(buf, count, datatype, message, nullptr, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Probe);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  rrt_status_t s{};
  int rc = rrt_probe(source, tag, c->rc, &s);
  statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Iprobe);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  rrt_status_t s{};
  int rc = rrt_iprobe(source, tag, c->rc, flag, &s);
  if (*flag) statusFromRrt(s, status, false);
  return check(comm, rc, __func__);
}

// ---- buffered sends ----------------------------------------------------------------------------

RRT_MPI_WEAK_ALIAS(MPI_Buffer_attach);
int PMPI_Buffer_attach(void* buffer, int size) {
  if (gAttached.present) return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, __func__);
  if (size < 0 || (size > 0 && buffer == nullptr)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  gAttached = Attached{buffer, static_cast<size_t>(size), true};
  return MPI_SUCCESS;
}

// Blocks until every buffered message has been sent (MPI 3.1 section 3.6.1).
RRT_MPI_WEAK_ALIAS(MPI_Buffer_detach);
int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  if (!gAttached.present) return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, __func__);
  requestReap(true, true);
  *static_cast<void**>(buffer_addr) = gAttached.buf;
  *size = static_cast<int>(gAttached.size);
  gAttached = Attached{};
  return MPI_SUCCESS;
}

// The data goes to a copy the layer owns (accounted against the attached buffer's size, with
// MPI_BSEND_OVERHEAD per message), so the call completes locally.
RRT_MPI_WEAK_ALIAS(MPI_Bsend);
int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  int err;
  Comm* c;
  Type* t = checkArgs(comm, &c, datatype, count, __func__, &err);
  if (!t) return err;
  size_t bytes = t->size * static_cast<size_t>(count);
  requestReap(false, true);
  if (!gAttached.present || bsendBytesInFlight() + bytes + MPI_BSEND_OVERHEAD > gAttached.size)
    return raise(comm, MPI_ERR_BUFFER, __func__);
  Stage st;
  char* copy = st.temp(bytes);
  typePack(*t, buf, static_cast<size_t>(count), copy);
  rrt_request_t rr = RRT_REQUEST_NULL;
  if (int e = check(comm, rrt_isend(copy, bytes, RRT_BYTE, dest, tag, c->rc, &rr), __func__))
    return e;
  requestDetach(rr, std::move(st), bytes + MPI_BSEND_OVERHEAD);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Ibsend);
int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, __func__);
  if (int e = PMPI_Bsend(buf, count, datatype, dest, tag, comm)) return e;
  // Complete at once: the data is in the layer's copy.
  *request = requestMake(RRT_REQUEST_NULL, comm, Stage{}, false);
  Request* r = requestGet(*request);
  r->done = true;
  r->doneStatus = rrt_status_t{MPI_ANY_SOURCE, MPI_ANY_TAG, RRT_SUCCESS, 0, 0};
  return MPI_SUCCESS;
}

}  // extern "C"

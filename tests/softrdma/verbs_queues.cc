// Exported verbs: completion channels, CQs, SRQs, QPs and asynchronous events, plus the post
// operations the inline ibv_post_* functions reach through the context ops.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "tests/softrdma/cq.h"
#include "tests/softrdma/device_caps.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/engine.h"
#include "tests/softrdma/objects.h"
#include "tests/softrdma/qp_state.h"
#include "tests/softrdma/registry.h"
#include "tests/softrdma/requester.h"
#include "tests/softrdma/responder.h"
#include "tests/softrdma/verbs_ops.h"

using namespace rrt::tests::softrdma;

namespace {

uint32_t nextHandle() {
  static uint32_t handles = 0;
  return __atomic_add_fetch(&handles, 1, __ATOMIC_RELAXED);
}

Qp& asQp(ibv_qp* qp) { return *reinterpret_cast<Qp*>(qp); }
Srq& asSrq(ibv_srq* srq) { return *reinterpret_cast<Srq*>(srq); }
Cq& asCq(ibv_cq* cq) { return *reinterpret_cast<Cq*>(cq); }

}  // namespace

namespace rrt::tests::softrdma {

int postSendOp(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr) {
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  int rc = requesterPostSend(engine, asQp(qp), wr, badWr);
  engine.flush();
  return rc;
}

int postRecvOp(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  int rc = responderPostRecv(engine, asQp(qp), wr, badWr);
  engine.flush();  // flush completions of a QP in ERR
  return rc;
}

int postSrqRecvOp(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  return responderPostSrqRecv(asSrq(srq), wr, badWr);
}

}  // namespace rrt::tests::softrdma

extern "C" {

// ---- completion channels and CQs ----------------------------------------------------------

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  auto* channel = new CompChannel();
  channel->ibv.context = context;
  channel->ibv.fd = fds[0];
  channel->writeFd = fds[1];
  return &channel->ibv;
}

int ibv_destroy_comp_channel(ibv_comp_channel* ibvChannel) {
  auto* channel = reinterpret_cast<CompChannel*>(ibvChannel);
  {
    std::lock_guard<std::mutex> guard(Engine::get().lock_);
    if (channel->cqs > 0) return EBUSY;
  }
  close(channel->ibv.fd);
  close(channel->writeFd);
  delete channel;
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel,
                      int compVector) {
  if (cqe < 1 || static_cast<uint32_t>(cqe) > kMaxCqe || compVector < 0 ||
      compVector >= context->num_comp_vectors) {
    errno = EINVAL;
    return nullptr;
  }
  auto* cq = new Cq();
  cq->ibv.context = context;
  cq->ibv.channel = channel;
  cq->ibv.cq_context = cqContext;
  cq->ibv.handle = nextHandle();
  cq->ibv.cqe = cqe;
  pthread_mutex_init(&cq->ibv.mutex, nullptr);
  pthread_cond_init(&cq->ibv.cond, nullptr);
  cq->ring_.resize(static_cast<size_t>(cqe));
  cq->channel_ = reinterpret_cast<CompChannel*>(channel);
  if (channel) {
    std::lock_guard<std::mutex> guard(Engine::get().lock_);
    ++cq->channel_->cqs;
  }
  cqBorn(cq);
  return &cq->ibv;
}

int ibv_destroy_cq(ibv_cq* ibvCq) {
  Cq& cq = asCq(ibvCq);
  {
    std::lock_guard<std::mutex> guard(Engine::get().lock_);
    if (cq.users_ > 0) return EBUSY;
    if (cq.channel_) --cq.channel_->cqs;
    Engine::get().forgetCq(&cq);
  }
  cqDied(&cq);
  // As libibverbs: wait until every event handed out has been acknowledged.
  pthread_mutex_lock(&ibvCq->mutex);
  while (ibvCq->comp_events_completed != cq.eventsDelivered_)
    pthread_cond_wait(&ibvCq->cond, &ibvCq->mutex);
  pthread_mutex_unlock(&ibvCq->mutex);
  delete &cq;
  return 0;
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext) {
  for (;;) {
    ibv_cq* pointer;
    ssize_t n = read(channel->fd, &pointer, sizeof pointer);
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof pointer) return -1;
    if (!cqTakeEvent(pointer)) continue;  // its CQ was destroyed meanwhile
    *cq = pointer;
    *cqContext = pointer->cq_context;
    return 0;
  }
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int count) {
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += count;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

// ---- shared receive queues ----------------------------------------------------------------

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* init) {
  if (init->attr.max_wr < 1 || init->attr.max_wr > kMaxSrqWr || init->attr.max_sge > kMaxSge ||
      init->attr.srq_limit > init->attr.max_wr) {
    errno = EINVAL;
    return nullptr;
  }
  auto* srq = new Srq();
  srq->ibv.context = pd->context;
  srq->ibv.srq_context = init->srq_context;
  srq->ibv.pd = pd;
  srq->ibv.handle = nextHandle();
  pthread_mutex_init(&srq->ibv.mutex, nullptr);
  pthread_cond_init(&srq->ibv.cond, nullptr);
  srq->pd = reinterpret_cast<Pd*>(pd);
  srq->maxWr_ = init->attr.max_wr;
  srq->maxSge_ = init->attr.max_sge ? init->attr.max_sge : 1;
  std::lock_guard<std::mutex> guard(Engine::get().lock_);
  ++srq->pd->users;
  return &srq->ibv;
}

int ibv_modify_srq(ibv_srq* ibvSrq, ibv_srq_attr* attr, int mask) {
  Srq& srq = asSrq(ibvSrq);
  std::lock_guard<std::mutex> guard(Engine::get().lock_);
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  uint32_t maxWr = (mask & IBV_SRQ_MAX_WR) ? attr->max_wr : srq.maxWr_;
  if (maxWr < srq.queue_.size() || maxWr > kMaxSrqWr || maxWr < 1) return EINVAL;
  if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > maxWr) return EINVAL;
  srq.maxWr_ = maxWr;
  if (mask & IBV_SRQ_LIMIT) srq.limit_ = attr->srq_limit;
  return 0;
}

int ibv_query_srq(ibv_srq* ibvSrq, ibv_srq_attr* attr) {
  Srq& srq = asSrq(ibvSrq);
  std::lock_guard<std::mutex> guard(Engine::get().lock_);
  attr->max_wr = srq.maxWr_;
  attr->max_sge = srq.maxSge_;
  attr->srq_limit = srq.limit_;
  return 0;
}

int ibv_destroy_srq(ibv_srq* ibvSrq) {
  Srq& srq = asSrq(ibvSrq);
  {
    std::lock_guard<std::mutex> guard(Engine::get().lock_);
    if (srq.users_ > 0) return EBUSY;
    --srq.pd->users;
  }
  delete &srq;
  return 0;
}

// ---- queue pairs --------------------------------------------------------------------------

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC)
    unimplemented("ibv_create_qp (only RC and UC queue pairs)");
  ibv_qp_cap& cap = init->cap;
  if (!init->send_cq || !init->recv_cq || cap.max_send_wr > kMaxQpWr ||
      cap.max_recv_wr > kMaxQpWr || cap.max_send_sge > kMaxSge || cap.max_recv_sge > kMaxSge ||
      cap.max_inline_data > kMaxInline) {
    errno = EINVAL;
    return nullptr;
  }
  auto* qp = new Qp();
  qp->ctx = Context::from(pd->context);
  qp->pd = reinterpret_cast<Pd*>(pd);
  qp->sendCq = &asCq(init->send_cq);
  qp->recvCq = &asCq(init->recv_cq);
  qp->srq = init->srq ? &asSrq(init->srq) : nullptr;
  qp->cap = cap;
  if (qp->srq) qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
  qp->sqSigAll = init->sq_sig_all != 0;
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.cap = qp->cap;
  qp->sq_.resize(cap.max_send_wr ? cap.max_send_wr : 1);
  qp->inlineArena_.resize(qp->sq_.size() * cap.max_inline_data);
  ibv_qp& q = qp->ibv;
  q.context = pd->context;
  q.qp_context = init->qp_context;
  q.pd = pd;
  q.send_cq = init->send_cq;
  q.recv_cq = init->recv_cq;
  q.srq = init->srq;
  q.handle = nextHandle();
  q.qp_num = Registry::instance().allocQpn(getpid());
  q.state = IBV_QPS_RESET;
  q.qp_type = init->qp_type;
  pthread_mutex_init(&q.mutex, nullptr);
  pthread_cond_init(&q.cond, nullptr);
  init->cap = qp->cap;
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  engine.qps_[q.qp_num] = qp;
  ++qp->pd->users;
  ++qp->sendCq->users_;
  ++qp->recvCq->users_;
  if (qp->srq) ++qp->srq->users_;
  return &q;
}

int ibv_modify_qp(ibv_qp* ibvQp, ibv_qp_attr* attr, int mask) {
  Qp& qp = asQp(ibvQp);
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  int rc = validateModify(qp, *attr, mask);
  if (rc != 0) return rc;
  applyModify(engine, qp, *attr, mask);
  if (mask & IBV_QP_STATE) ibvQp->state = attr->qp_state;
  engine.flush();
  return 0;
}

int ibv_query_qp(ibv_qp* ibvQp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) {
  Qp& qp = asQp(ibvQp);
  std::lock_guard<std::mutex> guard(Engine::get().lock_);
  *attr = qp.attr;
  attr->cap = qp.cap;
  attr->sq_draining = 0;
  if (init) {
    std::memset(init, 0, sizeof *init);
    init->qp_context = ibvQp->qp_context;
    init->send_cq = ibvQp->send_cq;
    init->recv_cq = ibvQp->recv_cq;
    init->srq = ibvQp->srq;
    init->cap = qp.cap;
    init->qp_type = ibvQp->qp_type;
    init->sq_sig_all = qp.sqSigAll;
  }
  return 0;
}

int ibv_destroy_qp(ibv_qp* ibvQp) {
  Qp& qp = asQp(ibvQp);
  {
    Engine& engine = Engine::get();
    std::lock_guard<std::mutex> guard(engine.lock_);
    engine.qps_.erase(qp.qpn());
    --qp.pd->users;
    --qp.sendCq->users_;
    --qp.recvCq->users_;
    if (qp.srq) --qp.srq->users_;
  }
  Registry::instance().releaseQpn(qp.qpn());
  delete &qp;
  return 0;
}

// ---- asynchronous events ------------------------------------------------------------------

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  for (;;) {
    ssize_t n = read(context->async_fd, event, sizeof *event);
    if (n < 0 && errno == EINTR) continue;
    return n == sizeof *event ? 0 : -1;
  }
}

void ibv_ack_async_event(ibv_async_event* event) {
  pthread_mutex_t* mutex = nullptr;
  pthread_cond_t* cond = nullptr;
  uint32_t* counter = nullptr;
  switch (event->event_type) {
    case IBV_EVENT_QP_LAST_WQE_REACHED:
    case IBV_EVENT_QP_FATAL:
      mutex = &event->element.qp->mutex;
      cond = &event->element.qp->cond;
      counter = &event->element.qp->events_completed;
      break;
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      mutex = &event->element.srq->mutex;
      cond = &event->element.srq->cond;
      counter = &event->element.srq->events_completed;
      break;
    default:
      return;
  }
  pthread_mutex_lock(mutex);
  ++*counter;
  pthread_cond_signal(cond);
  pthread_mutex_unlock(mutex);
}

}  // extern "C"

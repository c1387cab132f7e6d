#include "tests/softrdma/cq.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <unordered_set>

#include "tests/softrdma/die.h"
#include "tests/softrdma/engine.h"

namespace rrt::tests::softrdma {
namespace {

std::mutex gLiveLock;
std::unordered_set<ibv_cq*>& live() {
  static auto* set = new std::unordered_set<ibv_cq*>();
  return *set;
}

}  // namespace

void pushCompletion(Cq& cq, const ibv_wc& wc, bool solicited) {
  bool notify = false;
  {
    std::lock_guard<std::mutex> guard(cq.lock_);
    if (cq.count_ == cq.ring_.size())
      die("completion queue", "CQ overrun (%zu entries): the application polls too slowly",
          cq.ring_.size());
    cq.ring_[(cq.head_ + cq.count_) % cq.ring_.size()] = wc;
    ++cq.count_;
    if (cq.armed_ && (!cq.solicitedOnly_ || solicited || wc.status != IBV_WC_SUCCESS)) {
      cq.armed_ = false;
      notify = cq.channel_ != nullptr;
    }
  }
  if (notify) {
    ibv_cq* pointer = &cq.ibv;
    if (write(cq.channel_->writeFd, &pointer, sizeof pointer) != sizeof pointer)
      std::fprintf(stderr, "softrdma: completion channel full, event dropped\n");
  }
}

namespace {

int take(Cq& cq, int numEntries, ibv_wc* wc) {
  std::lock_guard<std::mutex> guard(cq.lock_);
  int n = 0;
  while (n < numEntries && cq.count_ > 0) {
    wc[n++] = cq.ring_[cq.head_];
    cq.head_ = (cq.head_ + 1) % cq.ring_.size();
    --cq.count_;
  }
  return n;
}

}  // namespace

int pollCq(ibv_cq* ibvCq, int numEntries, ibv_wc* wc) {
  Cq& cq = *reinterpret_cast<Cq*>(ibvCq);
  int n = take(cq, numEntries, wc);
  if (n > 0) return n;
  Engine::pollFromApplication();  // a polling thread lends the engine its CPU
  return take(cq, numEntries, wc);
}

int reqNotifyCq(ibv_cq* ibvCq, int solicitedOnly) {
  Cq& cq = *reinterpret_cast<Cq*>(ibvCq);
  if (!cq.channel_) return EINVAL;
  std::lock_guard<std::mutex> guard(cq.lock_);
  // A second request only widens solicited-only to "any".
  cq.solicitedOnly_ = cq.armed_ ? (cq.solicitedOnly_ && solicitedOnly) : solicitedOnly != 0;
  cq.armed_ = true;
  return 0;
}

void cqBorn(Cq* cq) {
  std::lock_guard<std::mutex> guard(gLiveLock);
  live().insert(&cq->ibv);
}

void cqDied(Cq* cq) {
  std::lock_guard<std::mutex> guard(gLiveLock);
  live().erase(&cq->ibv);
}

bool cqTakeEvent(ibv_cq* cq) {
  std::lock_guard<std::mutex> guard(gLiveLock);
  if (live().count(cq) == 0) return false;
  Cq& c = *reinterpret_cast<Cq*>(cq);
  pthread_mutex_lock(&cq->mutex);
  ++c.eventsDelivered_;
  pthread_mutex_unlock(&cq->mutex);
  return true;
}

}  // namespace rrt::tests::softrdma

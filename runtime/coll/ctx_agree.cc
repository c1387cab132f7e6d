// Context-id agreement: a vote, run as a collective task so that it never blocks the process
// (MPI_Comm_idup) and the blocking creations simply wait for it.
//
// A round, led by members[0] (the root), all messages on the parent's collective context:
//   1. offer:     every member sends the root the smallest id it could take (proto::ctxOffer:
//                 free, and neither claimed nor offered by another agreement running in this
//                 process, so concurrent agreements usually start on different ids);
//   2. candidate: the root sends everyone the largest offer;
//   3. vote:      each member claims the candidate (proto::ctxClaim) and sends yes, or no when
//                 it is taken here (used meanwhile, or claimed by a concurrent agreement);
//   4. decision:  the root sends commit when all said yes, else retry; on commit every member
//                 marks the id used, on retry releases its claim and offers above the candidate.
// Why a vote: agreements may now run concurrently in one process (idups pending while the
// program creates other communicators), and "the largest next-free id" alone would then give
// two of them the same id. A claim makes the id one agreement's until it commits or retries;
// since every round completes without waiting for any other agreement, overlapping agreements
// (MPICH's comm_idup_overlap: a ring of pairs) cannot deadlock. Cost: 4 message latencies per
// round, one round unless agreements collide.
#include "runtime/coll/ctx_agree.h"

#include <algorithm>

#include "runtime/coll/task.h"
#include "runtime/core/log.h"
#include "runtime/proto/matching.h"

namespace rrt::coll {
namespace {

struct Msg {
  uint32_t value;  // offer / candidate
  uint32_t yes;    // vote / decision
};

class CtxAgree final : public Task {
 public:
  CtxAgree(proto::Comm& parent, std::vector<int> members, uint32_t* result, rrt_comm_t* newcomm)
      : Task(parent, CollArgs{}), members_(std::move(members)), result_(result),
        newcomm_(newcomm) {
    me_ = static_cast<size_t>(std::find(members_.begin(), members_.end(), parent.rank) -
                              members_.begin());
    if (root()) in_.resize(members_.size());
  }
  ~CtxAgree() override {
    if (offered_) proto::ctxWithdraw(offer_);
    if (claimed_) proto::ctxUnclaim(cand_.value);
  }

  Status advance() override {
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Offer:
          offer_ = mine_.value = proto::ctxOffer(floor_);
          offered_ = true;
          if (root()) {
            RRT_TRY(fromAll());
          } else {
            RRT_TRY(send(members_[0], &mine_, sizeof mine_));
            RRT_TRY(recv(members_[0], &cand_, sizeof cand_));
          }
          phase_ = Phase::Vote;
          break;
        case Phase::Vote:
          if (root()) {
            cand_.value = mine_.value;
            for (size_t i = 1; i < in_.size(); ++i) cand_.value = std::max(cand_.value, in_[i].value);
            RRT_TRY(toAll(cand_));
          }
          if (!proto::Matcher::validContext(cand_.value + 1)) {  // the same on every member
            RRT_ERROR("out of communicator context ids (%u created)", cand_.value / 2);
            return Status::ErrComm;
          }
          proto::ctxWithdraw(offer_);
          offered_ = false;
          claimed_ = proto::ctxClaim(cand_.value);
          mine_ = Msg{cand_.value, claimed_ ? 1u : 0u};
          if (root()) {
            RRT_TRY(fromAll());
          } else {
            RRT_TRY(send(members_[0], &mine_, sizeof mine_));
            RRT_TRY(recv(members_[0], &decision_, sizeof decision_));
          }
          phase_ = Phase::Decide;
          break;
        case Phase::Decide:
          if (root()) {
            decision_ = Msg{cand_.value, mine_.yes};
            for (size_t i = 1; i < in_.size(); ++i) decision_.yes &= in_[i].yes;
            RRT_TRY(toAll(decision_));
          }
          if (decision_.yes) {
            claimed_ = false;
            proto::ctxCommit(cand_.value);
            RRT_TRY(done(cand_.value));
            phase_ = Phase::Done;
          } else {
            if (claimed_) proto::ctxUnclaim(cand_.value);
            claimed_ = false;
            floor_ = cand_.value + 2;
            ++retries_;
            RRT_DEBUG("context id %u taken in some member: agreeing again (%u)", cand_.value,
                      retries_);
            phase_ = Phase::Offer;
          }
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Offer, Vote, Decide, Done };
  bool root() const { return me_ == 0; }
  Status fromAll() {
    for (size_t i = 1; i < members_.size(); ++i) RRT_TRY(recv(members_[i], &in_[i], sizeof(Msg)));
    return Status::Ok;
  }
  Status toAll(const Msg& m) {
    for (size_t i = 1; i < members_.size(); ++i) RRT_TRY(send(members_[i], &m, sizeof m));
    return Status::Ok;
  }
  // The agreed id: handed to the caller, or (idup) made into the parent's duplicate.
  Status done(uint32_t ctx) {
    if (result_) *result_ = ctx;
    if (newcomm_) *newcomm_ = proto::commCreate(comm_, ctx, comm_.rank, members_)->handle;
    return Status::Ok;
  }

  std::vector<int> members_;
  size_t me_ = 0;
  uint32_t* result_;
  rrt_comm_t* newcomm_;
  Phase phase_ = Phase::Offer;
  uint32_t floor_ = 0;
  uint32_t retries_ = 0;
  bool claimed_ = false, offered_ = false;
  uint32_t offer_ = 0;
  Msg mine_{}, cand_{}, decision_{};
  std::vector<Msg> in_;  // root: one per member
};

}  // namespace

Status agreeContext(proto::Comm& parent, const std::vector<int>& members, int tag, uint32_t* ctx) {
  bindProtoP2p();
  core::Request* req = nullptr;
  launch(parent, new CtxAgree(parent, members, ctx, nullptr), tag, &req);
  return await(req);
}

Status startCommIdup(proto::Comm& parent, rrt_comm_t* newcomm, core::Request** out) {
  bindProtoP2p();
  std::vector<int> all(static_cast<size_t>(parent.size));
  for (int r = 0; r < parent.size; ++r) all[static_cast<size_t>(r)] = r;
  launch(parent, new CtxAgree(parent, std::move(all), nullptr, newcomm), collTag(parent.collSeq++),
         out);
  return Status::Ok;
}

}  // namespace rrt::coll

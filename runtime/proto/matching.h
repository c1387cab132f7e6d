// Tag matching with MPI semantics, for one context id.
//
// Posted receives wait in posting order; unexpected messages in arrival order. A message
// matches the first posted receive whose source and tag accept it (RRT_ANY_SOURCE and
// RRT_ANY_TAG accept any, but RRT_ANY_TAG never accepts a negative tag, which rrt keeps for
// itself). Because every peer's messages arrive in the order sent and are matched on arrival,
// this gives MPI's non-overtaking rule per (source, tag, communicator).
//
// Unexpected messages are Requests too (kind Recv, internal): they carry the header fields,
// and for eager data a pool buffer. Nothing here allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/list.h"
#include "runtime/core/request.h"

namespace rrt::proto {

using core::Request;

inline bool tagMatches(int want, int tag) {
  return want == RRT_ANY_TAG ? tag >= 0 : want == tag;
}
inline bool srcMatches(int want, int src) { return want == RRT_ANY_SOURCE || want == src; }

class MatchQueues {
 public:
  // Posted receives.
  void post(Request* r) { posted_.pushBack(r); }
  // Removes and returns the first posted receive accepting (src, tag), or nullptr.
  Request* takePosted(int src, int tag);
  // Removes r if it is still posted (cancel); false when it already matched.
  bool unpost(Request* r);

  // Unexpected messages.
  void addUnexpected(Request* u) { unexpected_.pushBack(u); }
  // The first unexpected message a receive for (src, tag) accepts; removed when take.
  Request* findUnexpected(int src, int tag, bool take);

  size_t postedCount() const { return posted_.size(); }
  size_t unexpectedCount() const { return unexpected_.size(); }
  core::List<Request, &Request::hook>& posted() { return posted_; }
  core::List<Request, &Request::hook>& unexpected() { return unexpected_; }

 private:
  core::List<Request, &Request::hook> posted_;
  core::List<Request, &Request::hook> unexpected_;
};

// The queues of every context id, indexed by id (ids are small and dense).
class Matcher {
 public:
  // Context ids are below this; a message naming a larger one is malformed (the table grows to
  // the largest id seen, so a hostile id must not size it).
  static constexpr uint32_t kMaxContextId = 1u << 24;
  static bool validContext(uint32_t ctx) { return ctx < kMaxContextId; }
  ~Matcher();
  MatchQueues& queues(uint32_t ctx) {
    if (ctx >= byCtx_.size() || !byCtx_[ctx]) return grow(ctx);
    return *byCtx_[ctx];
  }
  // For dumps and failure handling: every context's queues.
  const std::vector<MatchQueues*>& all() const { return byCtx_; }

 private:
  MatchQueues& grow(uint32_t ctx);
  std::vector<MatchQueues*> byCtx_;
};

}  // namespace rrt::proto

#include "runtime/proto/matching.h"

namespace rrt::proto {

Request* MatchQueues::takePosted(int src, int tag) {
  for (Request* r = posted_.front(); r; r = posted_.next(r)) {
    if (srcMatches(r->srcRank, src) && tagMatches(r->tag, tag)) {
      posted_.remove(r);
      return r;
    }
  }
  return nullptr;
}

bool MatchQueues::unpost(Request* r) {
  for (Request* p = posted_.front(); p; p = posted_.next(p)) {
    if (p == r) {
      posted_.remove(r);
      return true;
    }
  }
  return false;
}

Request* MatchQueues::findUnexpected(int src, int tag, bool take) {
  for (Request* u = unexpected_.front(); u; u = unexpected_.next(u)) {
    if (srcMatches(src, u->srcRank) && tagMatches(tag, u->tag)) {
      if (take) unexpected_.remove(u);
      return u;
    }
  }
  return nullptr;
}

Matcher::~Matcher() {
  for (MatchQueues* q : byCtx_) delete q;
}

MatchQueues& Matcher::grow(uint32_t ctx) {
  if (ctx >= byCtx_.size()) byCtx_.resize(static_cast<size_t>(ctx) + 16, nullptr);
  if (!byCtx_[ctx]) byCtx_[ctx] = new MatchQueues;
  return *byCtx_[ctx];
}

}  // namespace rrt::proto

#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/request.h"
#include "runtime/proto/request_ids.h"

namespace rrt {
namespace {

TEST(RequestPool, ReusesReleasedRequests) {
  core::Request* a = core::requestAlloc(core::ReqKind::Send);
  EXPECT_TRUE(core::requestValid(a));
  core::requestRelease(a);
  EXPECT_FALSE(core::requestValid(a));
  core::Request* b = core::requestAlloc(core::ReqKind::Recv);
  EXPECT_EQ(a, b);  // LIFO free list: no new memory on the fast path
  EXPECT_EQ(b->kind, core::ReqKind::Recv);
  EXPECT_FALSE(b->complete);
  core::requestRelease(b);
}

TEST(RequestPool, GrowsPastOneSlab) {
  std::vector<core::Request*> v;
  std::set<core::Request*> distinct;
  for (int i = 0; i < 1000; ++i) {
    v.push_back(core::requestAlloc(core::ReqKind::Send));
    distinct.insert(v.back());
  }
  EXPECT_EQ(distinct.size(), 1000u);
  for (auto* r : v) core::requestRelease(r);
}

TEST(RequestPool, CompleteRunsCallbackAndHonoursUserFree) {
  core::Request* r = core::requestAlloc(core::ReqKind::Send);
  int calls = 0;
  r->onComplete = [](core::Request*, void* arg) { ++*static_cast<int*>(arg); };
  r->onCompleteArg = &calls;
  core::requestComplete(r, Status::ErrTruncate);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->status.error, RRT_ERR_TRUNCATE);
  core::requestRelease(r);

  core::Request* f = core::requestAlloc(core::ReqKind::Send);
  f->userFreed = true;
  core::requestComplete(f, Status::Ok);
  EXPECT_FALSE(core::requestValid(f));  // released by completion
}

TEST(RequestIds, RejectsStaleAndForeignIds) {
  proto::RequestIds ids;
  core::Request* r = core::requestAlloc(core::ReqKind::Send);
  uint64_t id = ids.add(r);
  EXPECT_EQ(ids.find(id), r);
  ids.remove(id);
  EXPECT_EQ(ids.find(id), nullptr);
  uint64_t id2 = ids.add(r);  // same slot, new generation
  EXPECT_NE(id, id2);
  EXPECT_EQ(ids.find(id), nullptr);
  EXPECT_EQ(ids.find(id2), r);
  EXPECT_EQ(ids.find(0xdeadbeefdeadbeefull), nullptr);
  ids.remove(id2);
  core::requestRelease(r);
}

}  // namespace
}  // namespace rrt

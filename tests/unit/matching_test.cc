// The matching engine on its own: posted and unexpected queues with MPI's rules.
#include <gtest/gtest.h>

#include "runtime/proto/matching.h"

namespace rrt::proto {
namespace {

Request* recv(int src, int tag) {
  Request* r = core::requestAlloc(core::ReqKind::Recv);
  r->srcRank = src;
  r->tag = tag;
  return r;
}

class MatchingTest : public ::testing::Test {
 protected:
  void TearDown() override {
    while (Request* r = q.posted().popFront()) core::requestRelease(r);
    while (Request* r = q.unexpected().popFront()) core::requestRelease(r);
  }
  MatchQueues q;
};

TEST_F(MatchingTest, FirstPostedMatchWins) {
  Request* a = recv(1, 5);
  Request* b = recv(RRT_ANY_SOURCE, 5);
  Request* c = recv(1, RRT_ANY_TAG);
  q.post(a);
  q.post(b);
  q.post(c);
  EXPECT_EQ(q.takePosted(2, 5), b);  // a wants source 1
  EXPECT_EQ(q.takePosted(1, 7), c);  // a, b want tag 5
  EXPECT_EQ(q.takePosted(1, 5), a);
  EXPECT_EQ(q.takePosted(1, 5), nullptr);
  for (Request* r : {a, b, c}) core::requestRelease(r);
}

TEST_F(MatchingTest, AnyTagNeverMatchesInternalTags) {
  Request* a = recv(RRT_ANY_SOURCE, RRT_ANY_TAG);
  q.post(a);
  EXPECT_EQ(q.takePosted(0, -2), nullptr);
  EXPECT_EQ(q.takePosted(0, 0), a);
  core::requestRelease(a);
}

TEST_F(MatchingTest, UnexpectedInArrivalOrderPerSourceAndTag) {
  Request* m1 = recv(3, 1);  // unexpected messages carry their real source/tag
  Request* m2 = recv(4, 1);
  Request* m3 = recv(3, 1);
  q.addUnexpected(m1);
  q.addUnexpected(m2);
  q.addUnexpected(m3);
  EXPECT_EQ(q.findUnexpected(3, 1, false), m1);  // probe: no removal
  EXPECT_EQ(q.unexpectedCount(), 3u);
  EXPECT_EQ(q.findUnexpected(RRT_ANY_SOURCE, 1, true), m1);
  EXPECT_EQ(q.findUnexpected(3, RRT_ANY_TAG, true), m3);  // non-overtaking: m3 after m1
  EXPECT_EQ(q.findUnexpected(4, 2, true), nullptr);
  EXPECT_EQ(q.findUnexpected(RRT_ANY_SOURCE, RRT_ANY_TAG, true), m2);
  EXPECT_EQ(q.unexpectedCount(), 0u);
  for (Request* r : {m1, m2, m3}) core::requestRelease(r);
}

TEST_F(MatchingTest, UnpostIsCancel) {
  Request* a = recv(0, 0);
  Request* b = recv(0, 0);
  q.post(a);
  q.post(b);
  EXPECT_TRUE(q.unpost(a));
  EXPECT_FALSE(q.unpost(a));  // already gone: cancel has no effect
  EXPECT_EQ(q.takePosted(0, 0), b);
  for (Request* r : {a, b}) core::requestRelease(r);
}

TEST(Matcher, ContextsAreSeparate) {
  Matcher m;
  Request* a = recv(0, 0);
  m.queues(0).post(a);
  EXPECT_EQ(m.queues(1).takePosted(0, 0), nullptr);
  EXPECT_EQ(m.queues(1000).takePosted(0, 0), nullptr);
  EXPECT_EQ(m.queues(0).takePosted(0, 0), a);
  core::requestRelease(a);
}

}  // namespace
}  // namespace rrt::proto

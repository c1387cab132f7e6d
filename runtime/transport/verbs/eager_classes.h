// Eager size classes of the verbs transport: which receive-buffer sizes a rank posts (one SRQ,
// one bounce pool and one QP per peer for each class), how many SENDs a peer may have in each
// (its credits), and which class a sender picks for one message. Pure functions of their
// arguments: unit-tested without a device (tests/unit/verbs_eager_classes_test.cc).
//
// Why one QP per class: a SEND consumes the next receive of the one SRQ its destination QP is
// attached to, and a buffer smaller than the message fails the QP (local length error). So the
// sender chooses the receiver's buffer size by choosing the QP; each class's QPs hang on that
// class's SRQ. Messages of one peer then travel on several QPs and may complete out of order:
// the AM header carries a per-peer sequence number and the receiver delivers in that order.
//
// Classes (RRT_IB_EAGER_CLASSES): ascending buffer sizes, at most kMaxEagerClasses, each at
// least kMinEagerBuf and rounded up to 64 bytes. "auto" = 1K and RRT_IB_EAGER_BUF (one class
// when that is no larger than 1K). Credits (RRT_IB_CREDITS): one number for every class or one
// per class; "auto" = 64 for buffers up to 2K, 16 above (tiny messages are the common case and
// their buffers are cheap; large buffers are few, and a stream of them turns to rendezvous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace rrt::transport::verbs {

constexpr int kMaxEagerClasses = 4;
constexpr size_t kMinEagerBuf = 64;
constexpr uint32_t kMinCredits = 2;

struct EagerClasses {
  int n = 0;
  uint32_t bufBytes[kMaxEagerClasses] = {};  // receive buffer bytes, ascending, multiples of 64
  uint32_t credits[kMaxEagerClasses] = {};
};

// ErrArg (the caller warns with the value) for a malformed list: not ascending, too many,
// too small, a credit count below kMinCredits or a credit list whose length is not 1 or n.
Status parseEagerClasses(const std::string& sizes, const std::string& credits,
                         size_t autoLargest, EagerClasses* out);

constexpr int kClassNoCredit = -1;  // every class the message fits has no credit now
constexpr int kClassTooBig = -2;    // larger than the largest class

// The class for a message of `bytes` (transport header included): the smallest class whose
// buffer holds it and that has a credit left; a message spills into a larger class only when
// the ones below are out of credits.
inline int pickEagerClass(const uint32_t* bufBytes, const uint32_t* credits, int n,
                          size_t bytes) {
  int c = 0;
  while (c < n && bufBytes[c] < bytes) ++c;
  if (c == n) return kClassTooBig;
  for (; c < n; ++c)
    if (credits[c] != 0) return c;
  return kClassNoCredit;
}

}  // namespace rrt::transport::verbs

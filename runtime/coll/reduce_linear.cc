// Reduce: linear (flat tree): every other rank sends its input to the root at once and leaves;
// the root receives all p-1 messages, then combines them in rank order.
// Cost: alpha + (p-1) n (beta + gamma) at the root, depth 1; a non-root only posts one (eager)
// send. Wins for small messages at small p, above all when ranks outnumber the cores: no rank
// waits for an inner tree node that may not be running, as in binomial (the same reason as
// bcast linear and barrier linear; tuning/shm-2vcpu.txt). Loses once the root's (p-1) n
// dominates. Any p, any op: the root combines x_0 op x_1 op ... op x_(p-1) (right to left, so
// that the kernel's inout = in op inout keeps rank order).
// Memory at the root: p n bytes of scratch (one slot per rank; the root's own slot holds a copy
// of its input only when it is the last rank, whose data starts the combination). Out of place,
// the last rank's message lands in rbuf itself, which then accumulates the result: no copy out.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

// Where the combination runs, starting from x_(p-1): rbuf when it is free to take the last
// rank's message (out of place, the root is not the last rank), else that rank's slot.
char* accumulator(const CollArgs& a, int p, char* slots) {
  if (!inPlace(a.sbuf) && a.root != p - 1) return static_cast<char*>(a.rbuf);
  return slots + static_cast<size_t>(p - 1) * a.count * a.typeSize;
}

// Posts this rank's messages through post (a Task or a Direct): at the root a receive per other
// rank into its slot of scratch, elsewhere the send of the input.
template <typename Post>
Status postLinear(const CollArgs& a, int r, int p, char* slots, Post&& post) {
  const size_t bytes = a.count * a.typeSize;
  if (r != a.root) return post.send(a.root, a.sbuf, bytes);
  for (int s = 1; s < p; ++s) {
    const int from = fromRelative(s, a.root, p);
    char* dst = from == p - 1 ? accumulator(a, p, slots) : slots + static_cast<size_t>(from) * bytes;
    RRT_TRY(post.recv(from, dst, bytes));
  }
  return Status::Ok;
}

// At the root once every message is in: rbuf = x_0 op ... op x_(p-1).
template <typename Reduce, typename Copy>
void combine(const CollArgs& a, int p, char* slots, Reduce&& reduce, Copy&& copy) {
  const size_t bytes = a.count * a.typeSize;
  const void* mine = inPlace(a.sbuf) ? a.rbuf : a.sbuf;
  char* acc = accumulator(a, p, slots);
  if (a.root == p - 1) copy(acc, mine, bytes);
  for (int i = p - 2; i >= 0; --i)
    reduce(i == a.root ? mine : slots + static_cast<size_t>(i) * bytes, acc, a.count);
  copy(a.rbuf, acc, bytes);  // nothing when acc is rbuf
}

class ReduceLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size();
    const size_t bytes = args_.count * args_.typeSize;
    const bool root = rank() == args_.root;
    if (!posted_) {
      posted_ = true;
      if (p == 1 || bytes == 0) {
        if (root) copy(args_.rbuf, inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf, bytes);
        return Status::Ok;
      }
      if (root && !(slots_ = scratch(static_cast<size_t>(p) * bytes))) return Status::ErrNoMemory;
      RRT_TRY(postLinear(args_, rank(), p, slots_, *this));
    }
    if (!idle()) return Status::InProgress;
    RRT_TRY(error_);
    if (root)
      combine(
          args_, p, slots_, [&](const void* in, void* io, size_t n) { reduce(in, io, n); },
          [&](void* dst, const void* src, size_t n) { copy(dst, src, n); });
    return Status::Ok;
  }

 private:
  template <typename Post>
  friend Status postLinear(const CollArgs&, int, int, char*, Post&&);
  bool posted_ = false;
  char* slots_ = nullptr;
};

}  // namespace

Task* makeReduceLinear(proto::Comm& c, CollArgs&& a) { return new ReduceLinear(c, std::move(a)); }

// The task's messages, one wait, then the root's combination.
Status reduceLinearDirect(Direct& d, const CollArgs& a) {
  const int p = d.size();
  const size_t bytes = a.count * a.typeSize;
  const bool root = d.rank() == a.root;
  if (p == 1 || bytes == 0) {
    if (root) Direct::copy(a.rbuf, inPlace(a.sbuf) ? a.rbuf : a.sbuf, bytes);
    return Status::Ok;
  }
  char* slots = nullptr;
  if (root && !(slots = d.scratch(static_cast<size_t>(p) * bytes))) return Status::ErrNoMemory;
  RRT_TRY(postLinear(a, d.rank(), p, slots, d));
  if (!root) return Status::Ok;
  RRT_TRY(d.wait());
  combine(
      a, p, slots, [&](const void* in, void* io, size_t n) { a.reducer.apply(in, io, n); },
      Direct::copy);
  return Status::Ok;
}

}  // namespace rrt::coll

// The staging pipeline, step by step against the driver double in manual mode: chunking,
// copies in flight, overlap of copy i+1 with transfer i, in-order hand-off, slot reuse.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/gpu/pipeline.h"
#include "tests/unit/gpu_fake_driver.h"

using rrt::Status;
using rrt::gpu::Direction;
using rrt::gpu::Pipeline;
using rrt::gpu::test::FakeDriver;

namespace {

struct Sink {
  FakeDriver* d;
  std::vector<size_t> order;         // chunk indices handed on
  std::vector<size_t> copiesIssued;  // copies issued when each chunk was handed on
  std::vector<char> out;             // what the transfers carried, by offset
  Status answer = Status::Ok;
  static Status transfer(void* arg, size_t i, void* slot, size_t off, size_t n) {
    Sink* s = static_cast<Sink*>(arg);
    if (s->answer == Status::NoResource) return Status::NoResource;
    s->order.push_back(i);
    s->copiesIssued.push_back(s->d->log.size());
    memcpy(s->out.data() + off, slot, n);
    return s->answer;
  }
};

std::vector<char> pattern(size_t n) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 7 + 3);
  return v;
}

TEST(Pipeline, ToHostOverlapsCopyOfNextChunkWithTransfer) {
  FakeDriver d;
  d.manual = true;
  const size_t bytes = 10 * 1000 + 123, chunk = 1000;
  void* dev = d.devAlloc(bytes);
  auto src = pattern(bytes);
  d.devWrite(dev, src.data(), bytes);
  std::vector<char> ring(3 * chunk);  // 3 bounce slots, reused
  Sink sink{&d, {}, {}, std::vector<char>(bytes)};
  Pipeline p(&d);
  Pipeline::Plan plan;
  plan.dir = Direction::ToHost;
  plan.device = dev;
  plan.bytes = bytes;
  plan.host = ring.data();
  plan.hostBytes = ring.size();
  plan.chunk = chunk;
  plan.depth = 2;
  plan.transfer = &Sink::transfer;
  plan.arg = &sink;
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  EXPECT_EQ(p.chunks(), 11u);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 2u) << "depth 2: two copies in flight";
  EXPECT_TRUE(sink.order.empty()) << "handed on before its copy finished";
  d.completeNext();  // chunk 0 copied
  EXPECT_EQ(p.progress(), Status::InProgress);
  ASSERT_EQ(sink.order.size(), 1u);
  // When chunk 0 was handed on, the copy of chunk 1 was already issued (overlap), and the slot
  // of chunk 0 was refilled right after.
  EXPECT_GE(sink.copiesIssued[0], 2u);
  EXPECT_EQ(d.log.size(), 3u);
  while (p.progress() == Status::InProgress) d.completeNext();
  ASSERT_EQ(sink.order.size(), 11u);
  for (size_t i = 0; i < sink.order.size(); ++i) EXPECT_EQ(sink.order[i], i);
  EXPECT_EQ(sink.out, src);
  // Each copy read the right device range into the slot i % 3.
  for (size_t i = 0; i < d.log.size(); ++i) {
    EXPECT_EQ(d.log[i].src, reinterpret_cast<uintptr_t>(dev) + i * chunk);
    EXPECT_EQ(d.log[i].dst, reinterpret_cast<uintptr_t>(ring.data()) + (i % 3) * chunk);
  }
  EXPECT_EQ(d.log.back().n, 123u);
  d.devFree(dev);
}

TEST(Pipeline, SlotNotReusedBeforeAsyncTransferDone) {
  FakeDriver d;
  d.manual = true;
  const size_t chunk = 256, bytes = 4 * chunk;
  void* dev = d.devAlloc(bytes);
  std::vector<char> ring(2 * chunk);
  Sink sink{&d, {}, {}, std::vector<char>(bytes)};
  sink.answer = Status::InProgress;  // the transport still reads the slot
  Pipeline p(&d);
  Pipeline::Plan plan{Direction::ToHost, dev, bytes, ring.data(), ring.size(), chunk, 8,
                      &Sink::transfer, &sink};
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 2u) << "window limited by the 2 slots";
  d.completeAll();
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(sink.order.size(), 2u);
  EXPECT_EQ(d.log.size(), 2u) << "slot refilled while its transfer was in progress";
  p.transferDone(1);  // out of order: chunk 0 still holds its slot, nothing moves
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 2u);
  p.transferDone(0);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 4u);
  d.completeAll();
  EXPECT_EQ(p.progress(), Status::InProgress);
  p.transferDone(2);
  p.transferDone(3);
  EXPECT_EQ(p.progress(), Status::Ok);
  d.devFree(dev);
}

TEST(Pipeline, NoResourceRetriesInOrder) {
  FakeDriver d;
  const size_t chunk = 100, bytes = 350;
  void* dev = d.devAlloc(bytes);
  auto src = pattern(bytes);
  d.devWrite(dev, src.data(), bytes);
  std::vector<char> ring(2 * chunk);
  Sink sink{&d, {}, {}, std::vector<char>(bytes)};
  sink.answer = Status::NoResource;
  Pipeline p(&d);
  Pipeline::Plan plan{Direction::ToHost, dev, bytes, ring.data(), ring.size(), chunk, 2,
                      &Sink::transfer, &sink};
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_TRUE(sink.order.empty());
  sink.answer = Status::Ok;
  EXPECT_EQ(p.run(), Status::Ok);
  EXPECT_EQ(sink.order, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(sink.out, src);
  d.devFree(dev);
}

struct Source {
  std::vector<char> data;
  size_t ready = 0;  // bytes "arrived" so far
  std::vector<size_t> order;
  static Status fill(void* arg, size_t i, void* slot, size_t off, size_t n) {
    Source* s = static_cast<Source*>(arg);
    if (off + n > s->ready) return Status::NoResource;
    s->order.push_back(i);
    memcpy(slot, s->data.data() + off, n);
    return Status::Ok;
  }
};

TEST(Pipeline, ToDeviceCopiesChunksAsTheyArrive) {
  FakeDriver d;
  d.manual = true;
  const size_t chunk = 512, bytes = 5 * chunk + 7;
  void* dev = d.devAlloc(bytes);
  Source src{pattern(bytes), 0, {}};
  std::vector<char> ring(2 * chunk);
  Pipeline p(&d);
  Pipeline::Plan plan{Direction::ToDevice, dev, bytes, ring.data(), ring.size(), chunk, 2,
                      &Source::fill, &src};
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_TRUE(d.log.empty());
  src.ready = chunk;  // the first chunk arrived
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 1u);
  src.ready = bytes;
  EXPECT_EQ(p.progress(), Status::InProgress);
  EXPECT_EQ(d.log.size(), 2u) << "both slots busy until their copies finish";
  while (p.progress() == Status::InProgress) d.completeNext();
  std::vector<char> back(bytes);
  d.devRead(back.data(), dev, bytes);
  EXPECT_EQ(back, src.data);
  EXPECT_EQ(src.order, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
  d.devFree(dev);
}

TEST(Pipeline, WholeMessageHostBufferWithUnevenChunks) {
  FakeDriver d;
  const size_t bytes = 3 * 1000 + 4, chunk = 1001;  // hostBytes / chunk would give 3 slots
  void* dev = d.devAlloc(bytes);
  auto src = pattern(bytes);
  d.devWrite(dev, src.data(), bytes);
  std::vector<char> host(bytes);
  Pipeline p(&d);
  Pipeline::Plan plan{Direction::ToHost, dev, bytes, host.data(), host.size(), chunk, 4, nullptr, nullptr};
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  ASSERT_EQ(p.run(), Status::Ok);
  EXPECT_EQ(host, src);
  d.devFree(dev);
}

TEST(Pipeline, ErrorsAreValues) {
  FakeDriver d;
  Pipeline p(&d);
  Pipeline::Plan bad;
  EXPECT_EQ(p.start(bad, nullptr), Status::ErrArg);
  void* dev = d.devAlloc(1024);
  std::vector<char> host(1024);
  Pipeline::Plan plan{Direction::ToHost, dev, 1024, host.data(), host.size(), 256, 2, nullptr, nullptr};
  ASSERT_EQ(p.start(plan, nullptr), Status::Ok);
  d.failCopies = true;
  EXPECT_EQ(p.progress(), Status::ErrArg);
  EXPECT_EQ(p.progress(), Status::ErrArg);  // stays failed
  d.devFree(dev);
}

TEST(Pipeline, ChunkSizeBetween512KAnd4M) {
  EXPECT_EQ(Pipeline::chunkFor(100, 0), 512u * 1024);
  EXPECT_EQ(Pipeline::chunkFor(8u << 20, 0), 2u << 20);
  EXPECT_EQ(Pipeline::chunkFor(1u << 30, 0), 4u << 20);
  EXPECT_EQ(Pipeline::chunkFor(1u << 30, 65536), 65536u);
}

}  // namespace

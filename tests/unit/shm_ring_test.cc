// The shared-memory ring in isolation: layout, fill/backpressure, wrap-around with variable
// sizes, FIFO order and payload integrity (also across two threads), corrupt records.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "runtime/transport/shm/ring.h"

namespace rrt::transport::shm {
namespace {

// Zeroed, 64-byte aligned memory for one ring (the segment provides this in real use).
struct RingMemory {
  explicit RingMemory(size_t ringBytes) : bytes(ringBytes) {
    mem = aligned_alloc(64, ringFootprint(ringBytes));
    memset(mem, 0, ringFootprint(ringBytes));
    ringInit(mem);
  }
  ~RingMemory() { free(mem); }
  uint64_t firstWord(size_t cell) const {
    uint64_t w;
    memcpy(&w, static_cast<uint8_t*>(mem) + sizeof(RingControl) + cell * kCellBytes, 8);
    return w;
  }
  void* mem;
  size_t bytes;
};

// Payload byte i of message number seq.
uint8_t pattern(uint64_t seq, size_t i) { return static_cast<uint8_t>(seq * 131 + i * 7 + 3); }

struct Received {
  uint8_t id;
  std::vector<uint8_t> data;
};

std::vector<Received> drainAll(RingConsumer& c, int max = 1 << 30) {
  std::vector<Received> out;
  int n;
  do {
    n = c.drain(std::min(max, 64), [&](uint8_t id, const void* d, size_t len) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % 8, 0u) << "data must be 8-byte aligned";
      auto* p = static_cast<const uint8_t*>(d);
      out.push_back({id, std::vector<uint8_t>(p, p + len)});
    });
    EXPECT_GE(n, 0);
    max -= n;
  } while (n > 0 && max > 0);
  return out;
}

TEST(ShmRing, Layout) {
  EXPECT_EQ(sizeof(RingControl), 256u);
  EXPECT_EQ(offsetof(RingControl, head), 0u);
  EXPECT_EQ(offsetof(RingControl, tail), 128u);
  EXPECT_EQ(alignof(RingControl), 64u);
  EXPECT_EQ(recordCells(0), 1u);
  EXPECT_EQ(recordCells(56), 1u);
  EXPECT_EQ(recordCells(57), 2u);
  EXPECT_EQ(recordCells(120), 2u);
  EXPECT_EQ(recordCells(121), 3u);
  const uint64_t w = makeRecordWord(kRecordData, 0xab, 123456);
  EXPECT_EQ(recordType(w), kRecordData);
  EXPECT_EQ(recordId(w), 0xab);
  EXPECT_EQ(recordLen(w), 123456u);
}

TEST(ShmRing, FillUntilNoResourceThenDrain) {
  RingMemory m(kMinRingBytes);  // 64 cells
  RingProducer p(m.mem, m.bytes);
  RingConsumer c(m.mem, m.bytes);
  uint8_t buf[56];
  int accepted = 0;
  for (int i = 0; i < 1000; ++i) {
    memset(buf, i, sizeof buf);
    Status s = p.push(static_cast<uint8_t>(i), buf, sizeof buf, nullptr, 0);
    if (s == Status::NoResource) break;
    ASSERT_EQ(s, Status::Ok);
    ++accepted;
  }
  EXPECT_EQ(accepted, 64);  // one cell each, the whole ring
  EXPECT_EQ(p.push(0, buf, 8, nullptr, 0), Status::NoResource);
  auto got = drainAll(c);
  ASSERT_EQ(got.size(), 64u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(got[i].id, static_cast<uint8_t>(i));
    ASSERT_EQ(got[i].data.size(), 56u);
    for (uint8_t b : got[i].data) ASSERT_EQ(b, static_cast<uint8_t>(i));
  }
  for (size_t cell = 0; cell < 64; ++cell) EXPECT_EQ(m.firstWord(cell), 0u) << cell;
  EXPECT_EQ(p.push(1, buf, 8, nullptr, 0), Status::Ok);
  EXPECT_EQ(drainAll(c).size(), 1u);
}

TEST(ShmRing, EmptyRingDeliversNothing) {
  RingMemory m(kMinRingBytes);
  RingConsumer c(m.mem, m.bytes);
  EXPECT_FALSE(c.ready());
  EXPECT_EQ(c.drain(10, [](uint8_t, const void*, size_t) { FAIL(); }), 0);
}

TEST(ShmRing, HeaderAndPayloadAreConcatenated) {
  RingMemory m(kMinRingBytes);
  RingProducer p(m.mem, m.bytes);
  RingConsumer c(m.mem, m.bytes);
  const char hdr[] = "header:";
  const char pay[] = "payload";
  ASSERT_EQ(p.push(7, hdr, 7, pay, 7), Status::Ok);
  ASSERT_EQ(p.push(8, nullptr, 0, nullptr, 0), Status::Ok);  // empty message
  auto got = drainAll(c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 7);
  EXPECT_EQ(std::string(got[0].data.begin(), got[0].data.end()), "header:payload");
  EXPECT_EQ(got[1].id, 8);
  EXPECT_TRUE(got[1].data.empty());
}

TEST(ShmRing, CapacityRecordAlwaysFitsOnceDrained) {
  RingMemory m(kMinRingBytes);
  RingProducer p(m.mem, m.bytes);
  RingConsumer c(m.mem, m.bytes);
  std::vector<uint8_t> big(p.capacity(), 0x5c);
  for (size_t offsetCells = 0; offsetCells < 64; ++offsetCells) {
    // Move the head to an arbitrary cell, then the largest record must still go in.
    for (size_t i = 0; i < offsetCells; ++i) ASSERT_EQ(p.push(1, "x", 1, nullptr, 0), Status::Ok);
    drainAll(c);
    ASSERT_EQ(p.push(2, big.data(), big.size(), nullptr, 0), Status::Ok) << offsetCells;
    auto got = drainAll(c);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].data, big);
  }
}

TEST(ShmRing, WrapAroundVariableSizesFifoAndIntegrity) {
  RingMemory m(16 << 10);
  RingProducer p(m.mem, m.bytes);
  RingConsumer c(m.mem, m.bytes);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> sizeDist(0, p.capacity());
  std::uniform_int_distribution<int> smallDist(0, 200);
  std::vector<uint8_t> buf(p.capacity());
  uint64_t sent = 0, received = 0;
  std::vector<size_t> sizes;
  auto check = [&](uint8_t id, const void* d, size_t len) {
    ASSERT_LT(received, sent);
    ASSERT_EQ(len, sizes[received]);
    ASSERT_EQ(id, static_cast<uint8_t>(received));
    auto* b = static_cast<const uint8_t*>(d);
    for (size_t i = 0; i < len; ++i) ASSERT_EQ(b[i], pattern(received, i)) << "msg " << received;
    ++received;
  };
  while (received < 20000) {
    // Mostly small messages, some large ones, pushed until the ring refuses.
    for (int k = 0; k < 40; ++k) {
      const size_t len = (rng() % 8 == 0) ? sizeDist(rng) : smallDist(rng);
      for (size_t i = 0; i < len; ++i) buf[i] = pattern(sent, i);
      const size_t split = len ? rng() % (len + 1) : 0;
      Status s = p.push(static_cast<uint8_t>(sent), buf.data(), split, buf.data() + split,
                        len - split);
      if (s == Status::NoResource) break;
      ASSERT_EQ(s, Status::Ok);
      sizes.push_back(len);
      ++sent;
    }
    ASSERT_GE(c.drain(1 + rng() % 16, check), 0);
  }
  while (c.drain(64, check) > 0) {
  }
  EXPECT_EQ(received, sent);
  EXPECT_EQ(p.usedCells(), 0u);
  for (size_t cell = 0; cell < m.bytes / kCellBytes; ++cell) ASSERT_EQ(m.firstWord(cell), 0u);
}

TEST(ShmRing, TwoThreadsStress) {
  RingMemory m(8 << 10);
  RingProducer p(m.mem, m.bytes);
  RingConsumer c(m.mem, m.bytes);
  constexpr uint64_t kMessages = 200000;
  const size_t cap = p.capacity();
  std::thread producer([&] {
    std::vector<uint8_t> buf(cap);
    std::mt19937 rng(7);
    for (uint64_t seq = 0; seq < kMessages; ++seq) {
      const size_t len = (rng() % 16 == 0) ? rng() % (cap + 1) : rng() % 100;
      for (size_t i = 0; i < len; ++i) buf[i] = pattern(seq, i);
      memcpy(buf.data(), &seq, std::min(len, sizeof seq));
      while (p.push(static_cast<uint8_t>(seq), buf.data(), len, nullptr, 0) != Status::Ok)
        std::this_thread::yield();
    }
  });
  uint64_t received = 0;
  bool bad = false;
  while (received < kMessages && !bad) {
    int n = c.drain(32, [&](uint8_t id, const void* d, size_t len) {
      auto* b = static_cast<const uint8_t*>(d);
      if (id != static_cast<uint8_t>(received)) bad = true;
      uint64_t seq = received;
      for (size_t i = sizeof seq; i < len; ++i)
        if (b[i] != pattern(seq, i)) bad = true;
      if (len >= sizeof seq && memcmp(b, &seq, sizeof seq) != 0) bad = true;
      ++received;
    });
    ASSERT_GE(n, 0);
    if (n == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_FALSE(bad);
  EXPECT_EQ(received, kMessages);
}

TEST(ShmRing, CorruptRecordIsRejected) {
  RingMemory m(kMinRingBytes);
  RingConsumer c(m.mem, m.bytes);
  // A "producer" that writes a length running past the end of the ring.
  uint64_t w = makeRecordWord(kRecordData, 1, 1 << 20);
  memcpy(static_cast<uint8_t*>(m.mem) + sizeof(RingControl), &w, 8);
  EXPECT_EQ(c.drain(4, [](uint8_t, const void*, size_t) { FAIL(); }), -1);
  // An unknown record type.
  RingMemory m2(kMinRingBytes);
  RingConsumer c2(m2.mem, m2.bytes);
  w = uint64_t{0x77} << 40;
  memcpy(static_cast<uint8_t*>(m2.mem) + sizeof(RingControl), &w, 8);
  EXPECT_EQ(c2.drain(4, [](uint8_t, const void*, size_t) { FAIL(); }), -1);
}

}  // namespace
}  // namespace rrt::transport::shm

// A single-producer / single-consumer ring of variable-length records in shared memory.
//
// Layout (one ring = RingControl followed by `cells` cells of 64 bytes; `cells` is a power of
// two):
//
//   RingControl  bytes   0..63   producer line: head, cachedTail (only the producer touches it)
//                bytes 64..127   unused: keeps the two lines out of one adjacent-line prefetch pair
//                bytes 128..191  consumer line: tail (written by the consumer, read by the
//                                producer only when its cached copy says the ring is full)
//                bytes 192..255  unused
//   cells        a record starts on a cell boundary and spans ceil((8 + len) / 64) cells:
//                  word (8 bytes) | data (len bytes, 8-byte aligned, contiguous)
//
// The record word is the flag: 0 means "nothing here yet"; otherwise it holds the record type
// (data or skip), the AM id and the length, and is stored last, with release semantics, after
// the data. A record never wraps: when it does not fit before the end of the ring, the producer
// first publishes a skip record covering the rest of the ring and starts over at cell 0.
//
// Invariant that makes a single flag word enough: the first word of every free cell is 0. The
// ring starts zeroed (ftruncate), and the consumer zeroes the first word of every cell it
// consumed before it hands the cells back (publishes its tail). So the consumer never mistakes
// stale payload bytes from an earlier lap for a record header. Zeroing costs one store per 64
// bytes, and the producer's next write needs that line back anyway.
//
// head and tail count cells ever published / consumed (64-bit, never wrap in practice).
// The producer keeps a cached copy of tail and reloads it only when the ring looks full, so the
// consumer's line does not bounce on every message. The consumer hands cells back (zeroes and
// publishes) after a quarter of the ring was consumed, and whenever it finds the ring empty
// (idle()), so a producer waiting for room always gets it while the consumer keeps polling.
//
// Threading: push() from the one producer process, drain() from the one consumer process.
// Nothing here allocates, locks or makes a system call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/core/small_copy.h"
#include "runtime/core/status.h"

namespace rrt::transport::shm {

constexpr size_t kCellBytes = 64;
constexpr size_t kCellShift = 6;
constexpr size_t kRecordHeaderBytes = 8;
constexpr size_t kMinRingBytes = 4096;        // 64 cells
constexpr size_t kMaxRingBytes = size_t{1} << 30;
constexpr size_t kMaxRecordLen = (size_t{1} << 32) - 1;  // the length field is 32 bits

struct alignas(64) RingControl {
  // producer line
  uint64_t head;        // cells ever published
  uint64_t cachedTail;  // producer's last view of tail
  uint8_t producerPad[112];
  // consumer line (128 bytes away from the producer line)
  std::atomic<uint64_t> tail;  // cells ever consumed and zeroed
  uint8_t consumerPad[120];
};
static_assert(sizeof(RingControl) == 256, "RingControl is four cache lines");
static_assert(offsetof(RingControl, head) == 0, "producer line at 0");
static_assert(offsetof(RingControl, cachedTail) == 8, "cachedTail shares the producer line");
static_assert(offsetof(RingControl, tail) == 128, "consumer line 128 bytes after the producer's");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

// The record word: bits 0..31 length, 32..39 AM id, 40..47 type.
enum RecordType : uint64_t { kRecordData = 1, kRecordSkip = 2 };

constexpr uint64_t makeRecordWord(RecordType type, uint8_t id, uint32_t len) {
  return (uint64_t{type} << 40) | (uint64_t{id} << 32) | len;
}
constexpr RecordType recordType(uint64_t w) { return static_cast<RecordType>((w >> 40) & 0xff); }
constexpr uint8_t recordId(uint64_t w) { return static_cast<uint8_t>(w >> 32); }
constexpr uint32_t recordLen(uint64_t w) { return static_cast<uint32_t>(w); }
static_assert(makeRecordWord(kRecordData, 0, 0) != 0, "a published word is never 0");

// Cells a record of len data bytes occupies.
constexpr uint64_t recordCells(size_t len) {
  return (kRecordHeaderBytes + len + kCellBytes - 1) >> kCellShift;
}

// Bytes one ring of `ringBytes` cell bytes takes in the segment.
constexpr size_t ringFootprint(size_t ringBytes) { return sizeof(RingControl) + ringBytes; }

// Initializes a ring in zeroed memory (the segment creator does this once).
inline void ringInit(void* base) {
  auto* ctl = static_cast<RingControl*>(base);
  ctl->head = 0;
  ctl->cachedTail = 0;
  ctl->tail.store(0, std::memory_order_relaxed);
}

class RingProducer {
 public:
  RingProducer() = default;
  // base: the ring's RingControl; ringBytes: a power of two >= kMinRingBytes.
  RingProducer(void* base, size_t ringBytes)
      : ctl_(static_cast<RingControl*>(base)),
        cells_(static_cast<uint8_t*>(base) + sizeof(RingControl)),
        nCells_(ringBytes >> kCellShift) {}

  bool valid() const { return ctl_ != nullptr; }
  // Largest record this ring takes: half the ring (less the header). A record that does not fit
  // before the end costs a skip of up to its own size, so only records of at most half the
  // ring are sure to fit once the consumer has drained it.
  size_t capacity() const { return (nCells_ << (kCellShift - 1)) - kRecordHeaderBytes; }

  // Publishes one record: id, then a (alen bytes) followed by b (blen bytes).
  // Ok, or NoResource when the ring has no room now (nothing written).
  // The caller guarantees alen + blen <= capacity().
  [[gnu::always_inline]] Status push(uint8_t id, const void* a, size_t alen, const void* b,
                                     size_t blen) {
    const size_t len = alen + blen;
    const uint64_t cells = recordCells(len);
    uint64_t head = ctl_->head;
    uint64_t pos = head & (nCells_ - 1);
    const uint64_t pad = pos + cells > nCells_ ? nCells_ - pos : 0;
    const uint64_t need = pad + cells;
    if (head + need - ctl_->cachedTail > nCells_) {
      ctl_->cachedTail = ctl_->tail.load(std::memory_order_acquire);
      if (head + need - ctl_->cachedTail > nCells_) return Status::NoResource;
    }
    if (pad) {
      wordAt(pos)->store(makeRecordWord(kRecordSkip, 0, 0), std::memory_order_release);
      head += pad;
      pos = 0;
    }
    uint8_t* data = cells_ + (pos << kCellShift) + kRecordHeaderBytes;
    core::copySmall(data, a, alen);
    core::copySmall(data + alen, b, blen);
    wordAt(pos)->store(makeRecordWord(kRecordData, id, static_cast<uint32_t>(len)),
                       std::memory_order_release);
    ctl_->head = head + cells;
    return Status::Ok;
  }

  // Cells in use as far as the producer knows (for tests and diagnostics).
  uint64_t usedCells() const {
    return ctl_->head - ctl_->tail.load(std::memory_order_acquire);
  }

 private:
  std::atomic<uint64_t>* wordAt(uint64_t pos) {
    return reinterpret_cast<std::atomic<uint64_t>*>(cells_ + (pos << kCellShift));
  }

  RingControl* ctl_ = nullptr;
  uint8_t* cells_ = nullptr;
  uint64_t nCells_ = 0;
};

class RingConsumer {
 public:
  RingConsumer() = default;
  RingConsumer(void* base, size_t ringBytes)
      : ctl_(static_cast<RingControl*>(base)),
        cells_(static_cast<uint8_t*>(base) + sizeof(RingControl)),
        nCells_(ringBytes >> kCellShift),
        tail_(ctl_->tail.load(std::memory_order_relaxed)),
        published_(tail_) {}

  bool valid() const { return ctl_ != nullptr; }

  // True when a record is waiting (one load; for cheap idle polling).
  bool ready() const { return wordAt(tail_ & (nCells_ - 1))->load(std::memory_order_relaxed); }

  // Hands up to maxRecords data records to deliver(id, data, len), in order, straight from the
  // ring; data is valid only during the call. A call that finds the ring empty also does
  // idle(). Returns how many were delivered, or -1 when the
  // ring holds a record that cannot be valid (a corrupt or hostile producer; nothing is
  // delivered after it and the ring stays stuck).
  template <typename Deliver>
  int drain(int maxRecords, Deliver&& deliver) {
    int n = 0;
    while (n < maxRecords) {
      const uint64_t pos = tail_ & (nCells_ - 1);
      const uint64_t word = wordAt(pos)->load(std::memory_order_acquire);
      if (word == 0) {
        if (n == 0) idle();
        break;
      }
      uint64_t cells;
      if (recordType(word) == kRecordData) {
        const uint32_t len = recordLen(word);
        cells = recordCells(len);
        if (__builtin_expect(pos + cells > nCells_, 0)) return fail(n);
        deliver(recordId(word), cells_ + (pos << kCellShift) + kRecordHeaderBytes,
                static_cast<size_t>(len));
        ++n;
      } else if (recordType(word) == kRecordSkip) {
        cells = nCells_ - pos;
      } else {
        return fail(n);
      }
      tail_ += cells;
      if (tail_ - published_ >= (nCells_ >> 2)) release();
    }
    return n;
  }

  // Called when the ring was found empty: hands consumed cells back to the producer. Doing it
  // here rather than right after each record keeps the zeroing stores (which must take the
  // lines back from the producer) off the latency path of the next reply we send.
  void idle() {
    if (tail_ != published_) release();
  }

 private:
  std::atomic<uint64_t>* wordAt(uint64_t pos) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(cells_ + (pos << kCellShift));
  }
  // Zeroes the first word of every consumed cell (the invariant), then publishes the tail; the
  // release store orders the zeroing before it.
  void release() {
    for (uint64_t c = published_; c != tail_; ++c)
      wordAt(c & (nCells_ - 1))->store(0, std::memory_order_relaxed);
    published_ = tail_;
    ctl_->tail.store(tail_, std::memory_order_release);
  }
  int fail(int delivered) {
    idle();
    return delivered > 0 ? delivered : -1;
  }

  RingControl* ctl_ = nullptr;
  uint8_t* cells_ = nullptr;
  uint64_t nCells_ = 0;
  uint64_t tail_ = 0;       // local copy: the consumer is the only writer
  uint64_t published_ = 0;  // last tail stored to ctl_->tail
};

}  // namespace rrt::transport::shm

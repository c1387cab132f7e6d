// Fuzz target: the cells of a shared-memory ring as a hostile or corrupt producer may leave
// them (runtime/transport/shm/ring.h). The input is the ring's cell bytes (a 4 KiB ring, the
// smallest), preceded by the consumer's starting tail; drain() must deliver only records that
// lie wholly inside the ring, or report the ring broken, and never read outside it.
#include <cstring>
#include <memory>

#include "runtime/transport/shm/ring.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt::transport::shm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kRing = kMinRingBytes;
  rrt::fuzz::Input in(data, size);
  const uint64_t tail = in.u16();  // where the consumer starts (any lap)
  // Exactly the ring's footprint, so that ASan sees any read past its end.
  std::unique_ptr<uint8_t[]> mem(new uint8_t[ringFootprint(kRing)]);
  memset(mem.get(), 0, ringFootprint(kRing));
  ringInit(mem.get());
  auto* ctl = reinterpret_cast<RingControl*>(mem.get());
  ctl->head = tail;
  ctl->tail.store(tail);
  size_t got = 0;
  const uint8_t* cells = in.bytes(kRing, &got);
  memcpy(mem.get() + sizeof(RingControl), cells, got);

  RingConsumer rx(mem.get(), kRing);
  const uint8_t* lo = mem.get() + sizeof(RingControl);
  const uint8_t* hi = lo + kRing;
  uint64_t sum = 0;
  int total = 0;
  for (int round = 0; round < 8; ++round) {
    const int n = rx.drain(16, [&](uint8_t id, const void* d, size_t len) {
      const auto* p = static_cast<const uint8_t*>(d);
      RRT_FUZZ_CHECK(p >= lo && p + len <= hi);
      for (size_t i = 0; i < len; ++i) sum += p[i];  // touch every byte delivered
      sum += id;
    });
    if (n <= 0) break;
    total += n;
  }
  RRT_FUZZ_CHECK(total >= 0);
  // The consumer's published tail never passes what a producer could have written.
  RRT_FUZZ_CHECK(ctl->tail.load() - tail <= 8 * 16 * (kRing / kCellBytes));
  return static_cast<int>(sum & 0);
}

// Pipelined staging between device memory and host memory: the bytes of a device buffer move in
// chunks through host slots, with several copies in flight on the runtime's stream and the copy
// of chunk i+1 overlapping the transfer (hand-off) of chunk i.
//
//   ToHost    (sending a device buffer): chunk i is copied device -> slot; when its copy is done,
//             transfer(i, slot, offset, n) hands it on in chunk order. Ok: the slot is free
//             again; InProgress: the caller calls transferDone(i) once the slot may be reused;
//             NoResource: try again at the next progress(); an error stops the pipeline.
//   ToDevice  (receiving into a device buffer): transfer(i, slot, offset, n) fills the slot
//             (Ok: filled; NoResource: not yet); then the slot is copied -> device, and the slot
//             is reused once that copy is done.
//
// Slots: chunk i lives at host + (i % slots) * chunk where slots = hostBytes / chunk, or one per
// chunk when the host buffer holds the whole message; a host buffer as large as the message (no reuse) and a small ring of bounce buffers are the same
// code. At most min(depth, slots, kMaxDepth) chunks are between "copy issued" and "slot free".
// Chunks are handed on, and slots recycled, strictly in order.
//
// Driven by progress() (from a poller, or in a loop by a blocking caller); allocates nothing
// after start() (its events are created once per Pipeline and reused).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/gpu/driver.h"

namespace rrt::gpu {

enum class Direction : uint8_t { ToHost, ToDevice };

class Pipeline {
 public:
  static constexpr size_t kMaxDepth = 16;
  using Transfer = Status (*)(void* arg, size_t index, void* slot, size_t offset, size_t n);

  struct Plan {
    Direction dir = Direction::ToHost;
    void* device = nullptr;  // the device buffer (source for ToHost, destination for ToDevice)
    size_t bytes = 0;
    void* host = nullptr;    // slots
    size_t hostBytes = 0;
    size_t chunk = 0;
    size_t depth = 2;
    Transfer transfer = nullptr;  // may be null for ToHost: the slots are the destination
    void* arg = nullptr;
  };

  explicit Pipeline(Driver* d) : d_(d) {}
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  Status start(const Plan& plan, Stream stream);
  // Ok when every chunk is through, InProgress while not, an error when it failed.
  Status progress();
  // Drives progress() until done (blocking callers).
  Status run();
  void transferDone(size_t index);

  size_t chunks() const { return n_; }
  size_t issued() const { return issued_; }
  size_t delivered() const { return delivered_; }
  size_t released() const { return released_; }

  // The chunk sizes a plan gets: chunk sizes of ~512 KiB to 4 MiB by the message size.
  static size_t chunkFor(size_t bytes, size_t configured);

 private:
  enum class Slot : uint8_t { Free, Copying, Transferring, Done };
  char* slotAddr(size_t i) const { return static_cast<char*>(plan_.host) + (i % slots_) * plan_.chunk; }
  size_t lenOf(size_t i) const {
    const size_t off = i * plan_.chunk;
    return plan_.bytes - off < plan_.chunk ? plan_.bytes - off : plan_.chunk;
  }
  Status issue();

  Driver* d_;
  Stream stream_ = nullptr;
  Plan plan_;
  std::array<Event, kMaxDepth> events_{};
  std::array<Slot, kMaxDepth> state_{};
  size_t n_ = 0, slots_ = 0, window_ = 0;
  size_t issued_ = 0, delivered_ = 0, released_ = 0;
  Status failure_ = Status::Ok;
};

}  // namespace rrt::gpu

// CUDA IPC handles, both directions, cached.
//
// Export side (the owner of a device buffer): cuIpcGetMemHandle is slow (a system call into the
// driver), so the handle of each allocation is kept, keyed by its base and validated by its
// buffer id (a freed and reallocated range gets a new id and a new handle).
//
// Import side (a peer on the same node): cuIpcOpenMemHandle maps the peer's allocation (slow,
// and an allocation may be opened only once per context), so each opened mapping is kept, keyed
// by (peer, remote base), and validated by the remote buffer id carried in the rendezvous: a
// different id means the peer freed that allocation and made a new one there, so the old mapping
// is closed and the new handle opened. At most `capacity` mappings stay open; beyond that the
// least recently used one that nobody holds is closed. release() gives back a mapping acquired
// by acquire(); a mapping in use is never closed (it is closed when its last user releases it,
// if it was replaced or evicted meanwhile).
//
// Single-threaded, like the rest of rrt. Every driver error is returned, never fatal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <utility>

#include "runtime/gpu/driver.h"

namespace rrt::gpu {

// What a rendezvous carries for a device buffer reachable by IPC.
struct IpcKey {
  IpcHandle handle;
  uint64_t base;      // the remote allocation's base
  uint64_t bufferId;  // its driver buffer id
};

class IpcExportCache {
 public:
  explicit IpcExportCache(Driver* d) : d_(d) {}
  // The handle of the allocation described by info (from pointerInfo / the memory-type cache).
  Status get(const PointerInfo& info, IpcKey* out);
  void invalidate(uintptr_t base) { entries_.erase(base); }
  size_t size() const { return entries_.size(); }
  uint64_t driverCalls() const { return calls_; }

 private:
  Driver* d_;
  std::map<uintptr_t, IpcKey> entries_;
  uint64_t calls_ = 0;
};

class IpcImportCache {
 public:
  IpcImportCache(Driver* d, size_t capacity) : d_(d), capacity_(capacity ? capacity : 1) {}
  ~IpcImportCache();
  IpcImportCache(const IpcImportCache&) = delete;
  IpcImportCache& operator=(const IpcImportCache&) = delete;

  // The local address of the peer's allocation base (add the offset into it yourself).
  Status acquire(int peer, const IpcKey& key, void** base);
  void release(int peer, uint64_t remoteBase, void* local);
  // Closes every mapping of peer that nobody holds (the peer is gone).
  void dropPeer(int peer);

  size_t open() const { return open_; }  // mappings currently open
  uint64_t opens() const { return opens_; }
  uint64_t closes() const { return closes_; }

 private:
  struct Mapping {
    int peer;
    uint64_t base;
    uint64_t bufferId;
    void* local;
    int users = 0;
    bool live = true;  // false: replaced or evicted, close when users reaches 0
  };
  using Key = std::pair<int, uint64_t>;
  void close(Mapping* m);
  void evictIfFull();

  Driver* d_;
  size_t capacity_;
  std::list<Mapping> lru_;  // front = most recently used; dead mappings still held sit here too
  std::map<Key, std::list<Mapping>::iterator> live_;
  size_t open_ = 0;
  uint64_t opens_ = 0, closes_ = 0;
};

}  // namespace rrt::gpu

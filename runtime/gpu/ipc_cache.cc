#include "runtime/gpu/ipc_cache.h"

namespace rrt::gpu {

Status IpcExportCache::get(const PointerInfo& info, IpcKey* out) {
  auto it = entries_.find(info.base);
  if (it != entries_.end() && it->second.bufferId == info.bufferId) {
    *out = it->second;
    return Status::Ok;
  }
  IpcKey k{};
  ++calls_;
  RRT_TRY(d_->ipcGetHandle(reinterpret_cast<const void*>(info.base), &k.handle));
  k.base = info.base;
  k.bufferId = info.bufferId;
  entries_[info.base] = k;
  *out = k;
  return Status::Ok;
}

IpcImportCache::~IpcImportCache() {
  for (Mapping& m : lru_)
    if (m.local) (void)d_->ipcClose(m.local);
}

void IpcImportCache::close(Mapping* m) {
  if (m->local) {
    (void)d_->ipcClose(m->local);  // nothing to do about a failure but forget the mapping
    ++closes_;
    --open_;
    m->local = nullptr;
  }
}

void IpcImportCache::evictIfFull() {
  // Oldest first: the back of the list.
  for (auto it = lru_.end(); open_ >= capacity_ && it != lru_.begin();) {
    --it;
    if (it->users > 0) continue;
    if (it->live) live_.erase(Key{it->peer, it->base});
    close(&*it);
    it = lru_.erase(it);
  }
}

Status IpcImportCache::acquire(int peer, const IpcKey& key, void** base) {
  auto found = live_.find(Key{peer, key.base});
  if (found != live_.end()) {
    auto it = found->second;
    if (it->bufferId == key.bufferId) {
      lru_.splice(lru_.begin(), lru_, it);
      ++it->users;
      *base = it->local;
      return Status::Ok;
    }
    // The peer reallocated at this address: the old mapping is stale.
    live_.erase(found);
    it->live = false;
    if (it->users == 0) {
      close(&*it);
      lru_.erase(it);
    }
  }
  evictIfFull();
  void* local = nullptr;
  RRT_TRY(d_->ipcOpen(key.handle, &local));
  ++opens_;
  ++open_;
  lru_.push_front(Mapping{peer, key.base, key.bufferId, local, 1, true});
  live_[Key{peer, key.base}] = lru_.begin();
  *base = local;
  return Status::Ok;
}

void IpcImportCache::release(int peer, uint64_t remoteBase, void* local) {
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->local != local || it->peer != peer || it->base != remoteBase) continue;
    if (it->users > 0) --it->users;
    if (!it->live && it->users == 0) {
      close(&*it);
      lru_.erase(it);
    }
    return;
  }
}

void IpcImportCache::dropPeer(int peer) {
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->peer != peer) {
      ++it;
      continue;
    }
    if (it->live) {
      live_.erase(Key{it->peer, it->base});
      it->live = false;
    }
    if (it->users == 0) {
      close(&*it);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace rrt::gpu

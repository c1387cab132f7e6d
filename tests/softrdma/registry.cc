#include "tests/softrdma/registry.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/softrdma/die.h"

namespace rrt::tests::softrdma {
namespace {

constexpr uint32_t kFirstQpn = 0x100;  // below: reserved, like QP0/QP1 on hardware
constexpr uint32_t kQpnMask = 0xffffff;

bool processAlive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

Registry& Registry::instance() {
  static Registry* registry = [] {
    char path[64];
    std::snprintf(path, sizeof path, "/dev/shm/softrdma-%u", static_cast<unsigned>(getuid()));
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) die("Registry", "open %s: %s", path, std::strerror(errno));
    // Every opener truncates to the same size: zero-filled memory is a valid empty registry.
    if (ftruncate(fd, sizeof(Shared)) != 0) die("Registry", "ftruncate: %s", std::strerror(errno));
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) die("Registry", "mmap: %s", std::strerror(errno));
    return new Registry(static_cast<Shared*>(p));
  }();
  return *registry;
}

uint32_t Registry::allocQpn(pid_t owner) {
  for (uint32_t tries = 0; tries < 4 * kSlots; ++tries) {
    uint32_t n = shared_->nextQpn.fetch_add(1, std::memory_order_relaxed);
    uint32_t qpn = kFirstQpn + n % (kQpnMask - kFirstQpn);
    Slot& slot = shared_->slots[qpn % kSlots];
    int32_t pid = slot.pid.load(std::memory_order_acquire);
    if (pid != 0 && processAlive(pid)) continue;
    if (!slot.pid.compare_exchange_strong(pid, owner, std::memory_order_acq_rel)) continue;
    slot.qpn.store(qpn, std::memory_order_release);
    return qpn;
  }
  die("ibv_create_qp", "no free QPN in the host-wide registry");
}

void Registry::releaseQpn(uint32_t qpn) {
  Slot& slot = shared_->slots[qpn % kSlots];
  slot.qpn.store(0, std::memory_order_release);
  slot.pid.store(0, std::memory_order_release);
}

pid_t Registry::lookupQpn(uint32_t qpn) const {
  const Slot& slot = shared_->slots[qpn % kSlots];
  if (slot.qpn.load(std::memory_order_acquire) != qpn) return 0;
  pid_t pid = slot.pid.load(std::memory_order_acquire);
  if (slot.qpn.load(std::memory_order_acquire) != qpn) return 0;
  return pid;
}

uint32_t Registry::allocKey() {
  for (;;) {
    uint32_t key = shared_->nextKey.fetch_add(1, std::memory_order_relaxed) * 0x101 + 0x1000;
    if (key != 0) return key;
  }
}

}  // namespace rrt::tests::softrdma

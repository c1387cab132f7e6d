#include "runtime/transport/verbs/gdr.h"

#include "rrt_config.h"  // RRT_HAVE_IBV_REG_DMABUF_MR

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/gpu/gpu.h"

namespace rrt::transport::verbs {

namespace {
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
}

void GdrRegistrations::init(ibv_pd* pd, size_t maxEntries) {
  pd_ = pd;
  const std::string& v = config::value(config::Tunable::IbGdr);
  mode_ = v == "off" ? Mode::Off : v == "dmabuf" ? Mode::Dmabuf : v == "peermem" ? Mode::PeerMem
                                                                                   : Mode::Auto;
  if (v != "auto" && mode_ == Mode::Auto)
    RRT_WARN("RRT_IB_GDR=%s: expected auto, dmabuf, peermem or off; using auto", v.c_str());
  if (mode_ != Mode::Off && !gpu::enabled()) mode_ = Mode::Off;  // no CUDA: nothing to register
  describe_ = mode_ == Mode::Off      ? "off"
              : mode_ == Mode::Auto   ? "auto (untried)"
              : mode_ == Mode::Dmabuf ? "dmabuf"
                                      : "peermem";
  if (on()) cache_ = std::make_unique<memory::DeviceRegCache>(this, maxEntries);
}

void GdrRegistrations::turnOff(const char* why) {
  RRT_INFO("verbs: GPUDirect RDMA %s: device buffers are staged through host memory", why);
  mode_ = Mode::Off;
  describe_ = why;
}

ibv_mr* GdrRegistrations::regDmabuf(void* addr, size_t len) {
#if !defined(RRT_HAVE_IBV_REG_DMABUF_MR)
  (void)addr;
  (void)len;
  errno = EOPNOTSUPP;  // rdma-core older than 34: peer memory only
  return nullptr;
#else
  int fd = -1;
  uint64_t offset = 0;
  if (gpu::driver()->dmabuf(addr, len, &fd, &offset) != Status::Ok) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd_, offset, len, reinterpret_cast<uintptr_t>(addr), fd, kAccess);
  const int e = errno;
  close(fd);  // the registration holds its own reference to the dma-buf
  errno = e;
  return mr;
#endif
}

Status GdrRegistrations::reg(void* addr, size_t len, void** handle) {
  ibv_mr* mr = nullptr;
  if (mode_ == Mode::Dmabuf || mode_ == Mode::Auto) {
    mr = regDmabuf(addr, len);
    if (mr && mode_ == Mode::Auto) {
      mode_ = Mode::Dmabuf;
      describe_ = "dmabuf";
    }
  }
  if (!mr && (mode_ == Mode::PeerMem || mode_ == Mode::Auto)) {
    mr = ibv_reg_mr(pd_, addr, len, kAccess);  // nvidia-peermem resolves the device pages
    if (mr && mode_ == Mode::Auto) {
      mode_ = Mode::PeerMem;
      describe_ = "peermem";
    }
  }
  if (!mr) {
    RRT_DEBUG("verbs: registering device memory %p + %zu: %s", addr, len, strerror(errno));
    return errno == ENOMEM ? Status::ErrNoMemory : Status::ErrUnsupported;
  }
  if (!announced_) {
    announced_ = true;
    RRT_INFO("verbs: GPUDirect RDMA: device memory registered through %s", describe_);
  }
  auto* v = new VerbsMr;
  v->mr = mr;
  v->addr = addr;
  v->length = len;
  v->device = true;
  *handle = v;
  return Status::Ok;
}

void GdrRegistrations::dereg(void* handle) {
  auto* v = static_cast<VerbsMr*>(handle);
  ibv_dereg_mr(v->mr);
  delete v;
}

Status GdrRegistrations::get(void* addr, size_t len, VerbsMr** out) {
  if (!on()) return Status::ErrUnsupported;
  gpu::PointerInfo info;
  if (gpu::driver()->pointerInfo(addr, &info) != Status::Ok ||
      info.type != memory::MemType::Cuda ||
      reinterpret_cast<uintptr_t>(addr) + len > info.base + info.size)
    return Status::ErrArg;
  memory::RegEntry* e = nullptr;
  Status st = cache_->get(info.base, info.size, info.bufferId, &e);
  if (st == Status::ErrUnsupported) {
    turnOff(mode_ == Mode::Auto ? "off (device memory registration refused: no dmabuf, no peermem)"
                                : "off (device memory registration refused)");
    return st;
  }
  if (st != Status::Ok) return st;
  auto* v = static_cast<VerbsMr*>(e->handle);
  v->entry = e;
  *out = v;
  return Status::Ok;
}

void GdrRegistrations::put(VerbsMr* mr) { cache_->put(mr->entry); }

}  // namespace rrt::transport::verbs

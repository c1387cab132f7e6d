// GPUDirect RDMA: registering GPU memory with the RDMA device, so that the rendezvous moves a
// device buffer NIC to NIC with no staging through host memory (gpu::Proto::GdrRdma).
//
// Two ways a NIC can reach GPU memory, tried in this order (RRT_IB_GDR=auto):
//   dmabuf   the CUDA driver exports the allocation as a dma-buf (cuMemGetHandleForAddressRange)
//            and the device registers it (ibv_reg_dmabuf_mr, rdma-core >= 34, Linux >= 5.12):
//            the upstream path, no out-of-tree kernel module.
//   peermem  ibv_reg_mr on the device address itself, which works only when the nvidia-peermem
//            (or older nv_peer_mem) kernel module is loaded.
// Whether either works is known only when a registration is tried: on this path's first failure
// GPUDirect is turned off for the rest of the run (one log line) and the protocol pipelines
// device buffers through host memory, as without it. RRT_IB_GDR=off never tries;
// dmabuf / peermem choose one path.
//
// Registrations are cached per allocation (memory::DeviceRegCache): the whole allocation is
// registered once and reused by every message from any part of it; the driver's buffer id tells
// a reallocation at the same address from the cached one. One thread (the transport's).
#pragma once

#include <infiniband/verbs.h>

#include <memory>

#include "runtime/core/status.h"
#include "runtime/memory/device_reg_cache.h"
#include "runtime/transport/verbs/mr.h"

namespace rrt::transport::verbs {

class GdrRegistrations final : public memory::RegDomain {
 public:
  enum class Mode { Off, Auto, Dmabuf, PeerMem };

  // Reads RRT_IB_GDR; on (not Off) when GPU support is on (gpu::enabled()).
  void init(ibv_pd* pd, size_t maxEntries);
  bool on() const { return mode_ != Mode::Off; }
  // "off", "auto (untried)", "dmabuf", "peermem", "off (<why>)" for rrt_info.
  const char* describe() const { return describe_; }

  // A registration covering the device buffer [addr, addr+len) with one more reference.
  // ErrUnsupported: off, or the device refused (now off for good); ErrArg: not device memory.
  Status get(void* addr, size_t len, VerbsMr** out);
  void put(VerbsMr* mr);

 private:
  Status reg(void* addr, size_t len, void** handle) override;
  void dereg(void* handle) override;
  ibv_mr* regDmabuf(void* addr, size_t len);
  void turnOff(const char* why);

  ibv_pd* pd_ = nullptr;
  Mode mode_ = Mode::Off;
  const char* describe_ = "off";
  bool announced_ = false;  // the first registration's log line
  std::unique_ptr<memory::DeviceRegCache> cache_;
};

}  // namespace rrt::transport::verbs

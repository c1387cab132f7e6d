// The RDMA device and port a verbs transport uses: discovery, the RRT_IB_DEVICES choice, the
// GID to use on RoCE, and the limits the transport sizes itself by.
//
// Contract: open() walks ibv_get_device_list in order and takes the first entry of
// RRT_IB_DEVICES ("mlx5_0:1,mlx5_1:1"; a missing ":port" means the first active port; "auto" means
// the first active port of any device) that opens and has an ACTIVE port. On RoCE (Ethernet link
// layer) it picks the GID: RRT_IB_GID_INDEX, else the first RoCE v2 GID holding an IPv4-mapped
// address, else the first RoCE v2 one, else the first non-zero one. ErrUnsupported when no
// device matches (the transport is then not used). The Device owns the context and the PD.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace rrt::transport::verbs {

struct Device {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  std::string name;
  uint8_t port = 0;
  ibv_device_attr devAttr{};
  ibv_port_attr portAttr{};
  bool roce = false;  // Ethernet link layer: a GRH (GID) addresses the peer
  int gidIndex = -1;  // -1: no GID used (InfiniBand without GRH)
  ibv_gid gid{};

  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  Status open(const std::string& spec, const std::string& gidIndexSpec);
  // Rough data rate of the port in MB/s (width x speed), for Caps::bandwidthMBs.
  double portMBs() const;
};

const char* mtuName(ibv_mtu mtu);

}  // namespace rrt::transport::verbs

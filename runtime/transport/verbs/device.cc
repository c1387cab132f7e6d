#include "runtime/transport/verbs/device.h"

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "runtime/core/log.h"

namespace rrt::transport::verbs {
namespace {

struct Want {
  std::string dev;  // "" = any
  int port = 0;     // 0 = first active
};

std::vector<Want> parseSpec(const std::string& spec) {
  std::vector<Want> out;
  if (spec.empty() || spec == "auto") {
    out.push_back({});
    return out;
  }
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    Want w;
    size_t colon = item.find(':');
    w.dev = item.substr(0, colon);
    if (colon != std::string::npos) w.port = atoi(item.c_str() + colon + 1);
    out.push_back(w);
  }
  return out;
}

bool ipv4Mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g.raw, prefix, sizeof prefix) == 0;
}

bool zeroGid(const ibv_gid& g) {
  for (uint8_t b : g.raw)
    if (b) return false;
  return true;
}

}  // namespace

Device::~Device() {
  if (pd) ibv_dealloc_pd(pd);
  if (ctx) ibv_close_device(ctx);
}

Status Device::open(const std::string& spec, const std::string& gidIndexSpec) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) {
    if (list) ibv_free_device_list(list);
    return Status::ErrUnsupported;
  }
  Status result = Status::ErrUnsupported;
  for (const Want& w : parseSpec(spec)) {
    for (int i = 0; i < n && result != Status::Ok; ++i) {
      const char* dn = ibv_get_device_name(list[i]);
      if (!w.dev.empty() && w.dev != dn) continue;
      ibv_context* c = ibv_open_device(list[i]);
      if (!c) continue;
      ibv_device_attr da{};
      if (ibv_query_device(c, &da) != 0) {
        ibv_close_device(c);
        continue;
      }
      int chosen = 0;
      ibv_port_attr pa{};
      for (int p = 1; p <= da.phys_port_cnt; ++p) {
        if (w.port && p != w.port) continue;
        ibv_port_attr a{};
        if (ibv_query_port(c, static_cast<uint8_t>(p), &a) == 0 && a.state == IBV_PORT_ACTIVE) {
          chosen = p;
          pa = a;
          break;
        }
      }
      if (!chosen) {
        ibv_close_device(c);
        continue;
      }
      ctx = c;
      devAttr = da;
      portAttr = pa;
      port = static_cast<uint8_t>(chosen);
      name = dn;
      roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      result = Status::Ok;
    }
    if (result == Status::Ok) break;
  }
  ibv_free_device_list(list);
  if (result != Status::Ok) return result;

  // GID: required on RoCE; on InfiniBand only used when a user names one (routed fabrics).
  if (gidIndexSpec != "auto") {
    gidIndex = atoi(gidIndexSpec.c_str());
  } else if (roce) {
    int best = -1, bestRank = 0;
    for (int i = 0; i < portAttr.gid_tbl_len; ++i) {
      ibv_gid g{};
      if (ibv_query_gid(ctx, port, i, &g) != 0 || zeroGid(g)) continue;
      ibv_gid_entry ge{};
      const bool v2 = ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &ge, 0) == 0 &&
                      ge.gid_type == IBV_GID_TYPE_ROCE_V2;
      const int rank = v2 && ipv4Mapped(g) ? 3 : v2 ? 2 : 1;
      if (rank > bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    gidIndex = best;
    if (best < 0) {
      RRT_WARN("verbs: %s port %d is RoCE but has no usable GID", name.c_str(), port);
      return Status::ErrUnsupported;
    }
  }
  if (gidIndex >= 0 && ibv_query_gid(ctx, port, gidIndex, &gid) != 0) {
    RRT_WARN("verbs: %s port %d: GID index %d unreadable", name.c_str(), port, gidIndex);
    return Status::ErrUnsupported;
  }
  pd = ibv_alloc_pd(ctx);
  if (!pd) return Status::ErrTransport;
  return Status::Ok;
}

double Device::portMBs() const {
  double width = 1;
  switch (portAttr.active_width) {
    case 2: width = 4; break;
    case 4: width = 8; break;
    case 8: width = 12; break;
    case 16: width = 2; break;
    default: width = 1;
  }
  double gbps = 2.5;  // per lane, by active_speed
  switch (portAttr.active_speed) {
    case 2: gbps = 5; break;
    case 4: case 8: gbps = 10; break;
    case 16: gbps = 14; break;
    case 32: gbps = 25; break;
    case 64: gbps = 50; break;
    case 128: gbps = 100; break;
    default: gbps = 2.5;
  }
  return width * gbps * 1000 / 8;
}

const char* mtuName(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256: return "256";
    case IBV_MTU_512: return "512";
    case IBV_MTU_1024: return "1024";
    case IBV_MTU_2048: return "2048";
    case IBV_MTU_4096: return "4096";
  }
  return "?";
}

}  // namespace rrt::transport::verbs

// The TCP address blob a rank publishes through PMIx: the IPv4 and IPv6 addresses (with prefix
// lengths) its listening socket is reachable on, and the port.
//
// Layout: AddressHeader, then `count` AddressEntry. Parsed defensively: input from another
// process.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/core/status.h"

namespace rrt::transport::tcp {

constexpr uint32_t kAddressMagic = 0x72746370;  // "rtcp"
constexpr uint16_t kAddressVersion = 2;
constexpr uint16_t kMaxAddresses = 16;

struct AddressHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t count;
  int32_t rank;
  uint16_t port;  // network byte order
  uint16_t pad;
} __attribute__((packed));
static_assert(sizeof(AddressHeader) == 16, "the tcp address header is 16 bytes");

struct AddressEntry {
  uint8_t family;    // 4 or 6
  uint8_t prefix;    // subnet prefix length
  uint8_t pad[2];
  uint8_t addr[16];  // network byte order; IPv4 in the first 4 bytes, the rest zero
} __attribute__((packed));
static_assert(sizeof(AddressEntry) == 20, "a tcp address entry is 20 bytes");

// One address of an interface: IPv4 (family 4) or IPv6 (family 6), with its prefix length.
struct Endpoint {
  uint8_t family = 4;
  uint8_t prefix = 32;
  uint8_t addr[16] = {};  // network byte order; IPv4 in the first 4 bytes

  static Endpoint v4(uint32_t netOrder, uint8_t prefix) {
    Endpoint e;
    e.prefix = prefix;
    memcpy(e.addr, &netOrder, 4);
    return e;
  }
  static Endpoint v6(const in6_addr& a, uint8_t prefix) {
    Endpoint e;
    e.family = 6;
    e.prefix = prefix;
    memcpy(e.addr, &a, 16);
    return e;
  }
  uint8_t maxPrefix() const { return family == 6 ? 128 : 32; }
  bool operator==(const Endpoint& o) const {
    return family == o.family && prefix == o.prefix && memcmp(addr, o.addr, 16) == 0;
  }
};

inline void packAddress(int rank, uint16_t portNet, const std::vector<Endpoint>& eps,
                        std::vector<uint8_t>* blob) {
  AddressHeader h{};
  h.magic = kAddressMagic;
  h.version = kAddressVersion;
  h.count = static_cast<uint16_t>(eps.size());
  h.rank = rank;
  h.port = portNet;
  blob->resize(sizeof h + eps.size() * sizeof(AddressEntry));
  memcpy(blob->data(), &h, sizeof h);
  for (size_t i = 0; i < eps.size(); ++i) {
    AddressEntry e{};
    e.family = eps[i].family;
    e.prefix = eps[i].prefix;
    memcpy(e.addr, eps[i].addr, 16);
    memcpy(blob->data() + sizeof h + i * sizeof e, &e, sizeof e);
  }
}

inline Status parseAddress(const void* blob, size_t len, int peer, uint16_t* portNet,
                           std::vector<Endpoint>* eps) {
  if (blob == nullptr || len < sizeof(AddressHeader)) return Status::ErrArg;
  AddressHeader h;
  memcpy(&h, blob, sizeof h);
  if (h.magic != kAddressMagic || h.version != kAddressVersion || h.rank != peer ||
      h.count == 0 || h.count > kMaxAddresses || h.port == 0 ||
      len != sizeof h + h.count * sizeof(AddressEntry))
    return Status::ErrArg;
  eps->clear();
  for (uint16_t i = 0; i < h.count; ++i) {
    AddressEntry e;
    memcpy(&e, static_cast<const uint8_t*>(blob) + sizeof h + i * sizeof e, sizeof e);
    Endpoint ep;
    ep.family = e.family;
    ep.prefix = e.prefix;
    memcpy(ep.addr, e.addr, 16);
    if ((e.family != 4 && e.family != 6) || e.prefix > ep.maxPrefix()) return Status::ErrArg;
    if (e.family == 4) {
      static const uint8_t zero[12] = {};
      if (memcmp(e.addr + 4, zero, 12) != 0) return Status::ErrArg;
    }
    eps->push_back(ep);
  }
  *portNet = h.port;
  return Status::Ok;
}

// Socket address of ep at portNet (network byte order); returns its length.
inline socklen_t toSockaddr(const Endpoint& ep, uint16_t portNet, sockaddr_storage* sa) {
  memset(sa, 0, sizeof *sa);
  if (ep.family == 6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(sa);
    in6->sin6_family = AF_INET6;
    memcpy(&in6->sin6_addr, ep.addr, 16);
    in6->sin6_port = portNet;
    return sizeof *in6;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(sa);
  in->sin_family = AF_INET;
  memcpy(&in->sin_addr, ep.addr, 4);
  in->sin_port = portNet;
  return sizeof *in;
}

}  // namespace rrt::transport::tcp

// The TCP address blob a rank publishes through PMIx: the IPv4 addresses (with prefix lengths)
// its listening socket is reachable on, and the port.
//
// Layout: AddressHeader, then `count` AddressEntry. Parsed defensively: input from another
// process.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/core/status.h"

namespace rrt::transport::tcp {

constexpr uint32_t kAddressMagic = 0x72746370;  // "rtcp"
constexpr uint16_t kAddressVersion = 1;
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
  uint32_t ipv4;     // network byte order
  uint8_t prefix;    // subnet prefix length
  uint8_t pad[3];
} __attribute__((packed));
static_assert(sizeof(AddressEntry) == 8, "a tcp address entry is 8 bytes");

struct Endpoint {
  uint32_t ipv4 = 0;  // network byte order
  uint8_t prefix = 32;
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
    e.ipv4 = eps[i].ipv4;
    e.prefix = eps[i].prefix;
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
    if (e.prefix > 32) return Status::ErrArg;
    eps->push_back(Endpoint{e.ipv4, e.prefix});
  }
  *portNet = h.port;
  return Status::Ok;
}

}  // namespace rrt::transport::tcp

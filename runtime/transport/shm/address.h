// The shm address blob a rank publishes through PMIx: enough for a peer to check that it talks
// to the rank it expects on this node and to reach its memory by CMA.
//
// Fixed size, little-endian host layout (only ranks of one node read it). connect() parses it
// defensively: it is input from another process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/core/status.h"

namespace rrt::transport::shm {

constexpr uint32_t kAddressMagic = 0x72736861;  // "rsha"
constexpr uint16_t kAddressVersion = 1;

struct AddressBlob {
  uint32_t magic;
  uint16_t version;
  uint16_t localIndex;  // index among ctx.localPeers
  int32_t worldRank;
  int32_t pid;
  uint32_t localSize;   // ranks on the node as the sender saw them
  uint32_t ringBytes;   // per-pair ring size in force at the sender
};
static_assert(sizeof(AddressBlob) == 24, "the shm address blob is 24 bytes");
static_assert(offsetof(AddressBlob, pid) == 12, "pid at byte 12");

// Checks a received blob against what this rank expects of `peer`.
inline Status parseAddress(const void* blob, size_t len, int peer, int expectedLocalIndex,
                           int localSize, size_t ringBytes, AddressBlob* out) {
  if (blob == nullptr || len != sizeof(AddressBlob)) return Status::ErrArg;
  AddressBlob a;
  memcpy(&a, blob, sizeof a);  // the blob may be unaligned
  if (a.magic != kAddressMagic || a.version != kAddressVersion || a.worldRank != peer ||
      a.localIndex != expectedLocalIndex || a.pid <= 0 ||
      a.localSize != static_cast<uint32_t>(localSize) || a.ringBytes != ringBytes)
    return Status::ErrArg;
  *out = a;
  return Status::Ok;
}

}  // namespace rrt::transport::shm

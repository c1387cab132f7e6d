// Which path a message with a device buffer takes: a pure function of the two buffers' memory
// types, where the peer is, the size and what the transport can do, so that it is unit-tested
// and printable (rrt_info), like the host protocol table.
//
//   Host       both buffers are host memory: the ordinary eager / rendezvous protocols.
//   Bounce     small messages: one cuMemcpyAsync through a pinned host bounce buffer on rrt's
//              stream, then the host protocol.
//   Ipc        same node, the sender's buffer on a device: the receiver opens the sender's CUDA
//              IPC handle (cached) and copies device-to-device (or device-to-host) itself.
//   GdrRdma    the transport to the peer registers device memory (GPUDirect RDMA: verbs with
//              dmabuf or peermem, usually across nodes): the host rendezvous moves the device
//              buffer zero-copy, RDMA READ (or WRITE) straight between the two buffers.
//   Pipelined  everything else: chunks of ~512 KiB - 4 MiB staged through pinned host memory,
//              the copy of chunk i+1 overlapping the transfer of chunk i.
#pragma once

#include <cstddef>

#include "runtime/memory/mem_type.h"

namespace rrt::gpu {

enum class Proto : unsigned char { Host, Bounce, Ipc, GdrRdma, Pipelined };

struct ProtoInput {
  memory::MemType send = memory::MemType::Host;  // the sender's buffer
  memory::MemType recv = memory::MemType::Host;  // the receiver's buffer (Host when unknown)
  size_t bytes = 0;
  bool sameNode = false;
  bool ipcUsable = false;        // IPC handles can be exported and opened between the two
  bool transportZcopyCuda = false;  // Caps::zcopyMemTypes has Cuda (GPUDirect registration)
  size_t bounceLimit = 0;        // largest message sent through one bounce buffer
};

Proto selectProto(const ProtoInput& in);
const char* protoName(Proto p);

}  // namespace rrt::gpu

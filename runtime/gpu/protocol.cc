#include "runtime/gpu/protocol.h"

namespace rrt::gpu {

using memory::MemType;

Proto selectProto(const ProtoInput& in) {
  if (in.send == MemType::Host && in.recv == MemType::Host) return Proto::Host;
  if (in.bytes <= in.bounceLimit) return Proto::Bounce;
  if (in.sameNode && in.send == MemType::Cuda && in.ipcUsable) return Proto::Ipc;
  if (in.transportZcopyCuda) return Proto::GdrRdma;  // the transport to the peer decides
  return Proto::Pipelined;
}

const char* protoName(Proto p) {
  switch (p) {
    case Proto::Host: return "host";
    case Proto::Bounce: return "cuda/bounce";
    case Proto::Ipc: return "cuda/ipc";
    case Proto::GdrRdma: return "cuda/gdr";
    case Proto::Pipelined: return "cuda/pipelined";
  }
  return "?";
}

}  // namespace rrt::gpu

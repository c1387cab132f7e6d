// Cross-memory attach (process_vm_readv/writev): how the emulated NIC moves payload between the
// address spaces of two processes of the same user.
// Contract: copies exactly `total` bytes described by the local and remote vectors (the sums must
// match), resuming after partial transfers; false if the kernel refuses or a range is unmapped.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>

namespace rrt::tests::softrdma {

bool cmaRead(pid_t pid, const iovec* local, size_t numLocal, const iovec* remote, size_t numRemote);
bool cmaWrite(pid_t pid, const iovec* local, size_t numLocal, const iovec* remote,
              size_t numRemote);

}  // namespace rrt::tests::softrdma

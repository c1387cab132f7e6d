// Collectives on device buffers, staged: every device buffer of the call gets a host mirror
// (copied in when the call starts, through runtime/gpu's stream), the host algorithm runs on the
// mirrors, and the result buffer is copied back to the device before the request completes.
// Reductions therefore run on the host for now; the device kernels (runtime/gpu/kernels.cu)
// are built and loadable but not yet used by the algorithms (README: GPU status).
//
// Which bytes a buffer spans is per collective (extents()): e.g. allgather's receive buffer is
// size * blockBytes, reduce's receive buffer matters only at the root, scatter's send buffer
// only at the root; RRT_IN_PLACE buffers have no mirror of their own.
#pragma once

#include "runtime/coll/coll.h"

namespace rrt::coll {

// The bytes of the send and receive buffer this rank passes (0 = not significant here).
void extents(const CollArgs& a, int rank, int size, size_t* sendBytes, size_t* recvBytes);

// Whether a buffer of a that this rank's part of the collective touches (extents()) is device
// memory. False whenever GPU support is off.
bool hasDeviceBuffer(const proto::Comm& comm, const CollArgs& a);

// When GPU support is on and a buffer of a is device memory: replaces them with host mirrors
// and returns the staging in *stage (else *stage = nullptr). Errors: ErrNoMemory, a copy error.
Status stageDeviceBuffers(const proto::Comm& comm, CollArgs& a, void** stage);
// Copies the result to the device buffer (when s is Ok) and frees the mirrors; returns s or
// the copy's error.
Status unstageDeviceBuffers(void* stage, Status s);

// Instead of mirrors: allreduce and reduce with a predefined op whose every rank is on one node
// and whose significant buffers are all device memory run on the device (Task::onDevice):
// device scratch, the device reduction kernels, device point-to-point between the ranks (CUDA
// IPC). Sets a.memType = Cuda and returns true then; false leaves a alone (mirrors).
bool runsOnDevice(const proto::Comm& comm, CollArgs& a);

}  // namespace rrt::coll

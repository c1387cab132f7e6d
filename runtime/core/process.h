// Whether a process of this node still runs: the liveness look that the shared-memory paths
// (the shm transport's peers, a collective's segment) take when a peer stops answering.
#pragma once

#include <sys/types.h>

namespace rrt::core {

// Whether the process still exists and is not a zombie (slow: reads /proc; for error paths).
bool processAlive(pid_t pid);

}  // namespace rrt::core

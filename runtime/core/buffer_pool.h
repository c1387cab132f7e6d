// Buffers for unexpected eager messages, in a few size classes with free lists, so that a
// burst of unexpected messages costs malloc only until the pool is warm. Larger buffers go
// straight to malloc.
#pragma once

#include <cstddef>

namespace rrt::core {

void* bufferGet(size_t bytes);
void bufferPut(void* p, size_t bytes);  // bytes: the size given to bufferGet

}  // namespace rrt::core

// Where a buffer lives. The protocol layer picks paths by it; transports say which they move
// zero-copy (Caps::zcopyMemTypes is a bit mask of 1u << MemType).
#pragma once

#include <cstdint>

namespace rrt::memory {

enum class MemType : uint8_t { Host = 0, Cuda = 1 };

constexpr uint32_t memTypeBit(MemType t) { return 1u << static_cast<unsigned>(t); }

}  // namespace rrt::memory

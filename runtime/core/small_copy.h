// copySmall: memcpy for the few bytes of a small message. Up to 32 bytes it is two overlapping
// moves of 16, 8, 4 or 2 bytes, inline; a call into libc's memcpy (PLT, then its size dispatch)
// costs more than such a copy. Larger copies go to memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rrt::core {

namespace detail {
template <size_t N>
inline void copyPair(uint8_t* d, const uint8_t* s, size_t n) {
  // Both loads before either store: the two chunks overlap when n < 2N.
  uint8_t head[N], tail[N];
  memcpy(head, s, N);
  memcpy(tail, s + n - N, N);
  memcpy(d, head, N);
  memcpy(d + n - N, tail, N);
}
}  // namespace detail

inline void copySmall(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (n > 32) {
    memcpy(d, s, n);
  } else if (n >= 16) {
    detail::copyPair<16>(d, s, n);
  } else if (n >= 8) {
    detail::copyPair<8>(d, s, n);
  } else if (n >= 4) {
    detail::copyPair<4>(d, s, n);
  } else if (n >= 2) {
    detail::copyPair<2>(d, s, n);
  } else if (n == 1) {
    *d = *s;
  }
}

}  // namespace rrt::core

#include "launcher/job_secret.h"

#include <sys/random.h>

#include <cstdint>

namespace rrt::launcher {

std::string newJobSecretHex() {
  constexpr size_t kBytes = 32;  // wireup::kSecretBytes
  uint8_t b[kBytes];
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return "";
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t v : b) {
    s.push_back(kHex[v >> 4]);
    s.push_back(kHex[v & 15]);
  }
  return s;
}

}  // namespace rrt::launcher

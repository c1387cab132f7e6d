#include "tests/softrdma/die.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace rrt::tests::softrdma {

void die(const char* function, const char* format, ...) {
  std::fprintf(stderr, "softrdma: %s: ", function);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

void unimplemented(const char* function) {
  die(function, "not implemented by the software RDMA device (tests/softrdma)");
}

}  // namespace rrt::tests::softrdma

#include "runtime/core/buffer_pool.h"

#include <cstdlib>

namespace rrt::core {
namespace {

constexpr size_t kClasses[] = {256, 4096, 65536, 1u << 20};
constexpr int kClassCount = 4;
constexpr size_t kMaxFree = 64;  // cached buffers per class

struct FreeList {
  void* items[kMaxFree];
  size_t count = 0;
};
FreeList gFree[kClassCount];

int classOf(size_t bytes) {
  for (int c = 0; c < kClassCount; ++c)
    if (bytes <= kClasses[c]) return c;
  return -1;
}

}  // namespace

void* bufferGet(size_t bytes) {
  int c = classOf(bytes);
  if (c < 0) return malloc(bytes ? bytes : 1);
  FreeList& f = gFree[c];
  if (f.count) return f.items[--f.count];
  return malloc(kClasses[c]);
}

void bufferPut(void* p, size_t bytes) {
  if (!p) return;
  int c = classOf(bytes);
  if (c >= 0 && gFree[c].count < kMaxFree) {
    gFree[c].items[gFree[c].count++] = p;
    return;
  }
  free(p);
}

}  // namespace rrt::core

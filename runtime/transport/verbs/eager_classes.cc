#include "runtime/transport/verbs/eager_classes.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "runtime/core/config.h"

namespace rrt::transport::verbs {
namespace {

Status parseList(const std::string& s, std::vector<uint64_t>* out) {
  if (!s.empty() && s.back() == ',') return Status::ErrArg;  // getline would drop the empty tail
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    uint64_t v = 0;
    if (item.empty() || config::parseSize(item, &v) != Status::Ok) return Status::ErrArg;
    out->push_back(v);
  }
  return out->empty() ? Status::ErrArg : Status::Ok;
}

}  // namespace

Status parseEagerClasses(const std::string& sizes, const std::string& credits,
                         size_t autoLargest, EagerClasses* out) {
  std::vector<uint64_t> sz;
  if (sizes == "auto") {
    const uint64_t largest = std::max<uint64_t>(autoLargest, kMinEagerBuf);
    if (largest > 1024) sz.push_back(1024);
    sz.push_back(largest);
  } else {
    RRT_TRY(parseList(sizes, &sz));
  }
  if (sz.size() > static_cast<size_t>(kMaxEagerClasses)) return Status::ErrArg;
  EagerClasses e;
  e.n = static_cast<int>(sz.size());
  for (int c = 0; c < e.n; ++c) {
    const uint64_t b = (sz[static_cast<size_t>(c)] + 63) & ~uint64_t{63};
    if (sz[static_cast<size_t>(c)] < kMinEagerBuf || b > (uint64_t{1} << 30)) return Status::ErrArg;
    if (c > 0 && b <= e.bufBytes[c - 1]) return Status::ErrArg;  // strictly ascending
    e.bufBytes[c] = static_cast<uint32_t>(b);
  }
  if (credits == "auto") {
    for (int c = 0; c < e.n; ++c) e.credits[c] = e.bufBytes[c] <= 2048 ? 64 : 16;
  } else {
    std::vector<uint64_t> cr;
    RRT_TRY(parseList(credits, &cr));
    if (cr.size() != 1 && cr.size() != sz.size()) return Status::ErrArg;
    for (int c = 0; c < e.n; ++c) {
      const uint64_t v = cr.size() == 1 ? cr[0] : cr[static_cast<size_t>(c)];
      if (v < kMinCredits || v > 0xffff) return Status::ErrArg;
      e.credits[c] = static_cast<uint32_t>(v);
    }
  }
  *out = e;
  return Status::Ok;
}

}  // namespace rrt::transport::verbs

#include "tests/softrdma/fault.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace rrt::tests::softrdma {
namespace {

struct Fault {
  ibv_wr_opcode op = IBV_WR_SEND;  // SEND: no fault
  uint64_t nth = 0;
  std::atomic<uint64_t> seen{0};
};

Fault& fault() {
  static Fault* f = [] {
    auto* x = new Fault;
    const char* v = getenv("SOFTRDMA_FAULT");
    if (!v) return x;
    if (strncmp(v, "read:", 5) == 0) {
      x->op = IBV_WR_RDMA_READ;
      x->nth = strtoull(v + 5, nullptr, 10);
    } else if (strncmp(v, "write:", 6) == 0) {
      x->op = IBV_WR_RDMA_WRITE;
      x->nth = strtoull(v + 6, nullptr, 10);
    }
    return x;
  }();
  return *f;
}

}  // namespace

uint32_t faultRkey(ibv_wr_opcode op, uint32_t rkey) {
  Fault& f = fault();
  if (f.nth == 0 || op != f.op) return rkey;
  return f.seen.fetch_add(1) + 1 == f.nth ? rkey ^ 0x80000000u : rkey;
}

}  // namespace rrt::tests::softrdma

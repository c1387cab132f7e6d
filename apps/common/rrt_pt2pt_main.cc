// Runs the shared point-to-point frame on rrt (see rrt_pt2pt_main.h).
#include "rrt_pt2pt_main.h"

namespace rrt::apps {
namespace {

constexpr int kSyncTag = 999;
int gPeer = 0;

// A two-rank barrier: an empty message each way.
void sync() {
  check(rrt_sendrecv(nullptr, 0, RRT_BYTE, gPeer, kSyncTag, nullptr, 0, RRT_BYTE, gPeer, kSyncTag,
                     RRT_COMM_WORLD, RRT_STATUS_IGNORE),
        "rrt_sendrecv(sync)");
}

}  // namespace

int pt2ptMain(int argc, char** argv, const pt2pt_bench& bench) {
  setProgram(bench.program);
  check(rrt_init(&argc, &argv), "rrt_init");
  pt2pt_runtime rt{};
  check(rrt_comm_rank(RRT_COMM_WORLD, &rt.rank), "rrt_comm_rank");
  check(rrt_comm_size(RRT_COMM_WORLD, &rt.nranks), "rrt_comm_size");
  rt.sync = sync;
  rt.device_unavailable = deviceUnavailable;
  gPeer = 1 - rt.rank;
  int code = pt2pt_main(argc, argv, &rt, &bench);
  check(rrt_finalize(), "rrt_finalize");
  return code;
}

}  // namespace rrt::apps

// rrt_latency: one-way latency by ping-pong between ranks 0 and 1, as OSU's osu_latency measures
// it: rank 0 sends and waits for the echo; latency = round-trip time / 2, averaged.
#include "common/rrt_pt2pt_main.h"

using rrt::apps::check;

namespace {

constexpr int kTag = 1;

double measure(const pt2pt_args* a) {
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = rrt_wtime();
    if (a->rank == 0) {
      check(rrt_send(a->send, a->size, RRT_BYTE, 1, kTag, RRT_COMM_WORLD), "rrt_send");
      check(rrt_recv(a->recv, a->size, RRT_BYTE, 1, kTag, RRT_COMM_WORLD, RRT_STATUS_IGNORE),
            "rrt_recv");
    } else {
      check(rrt_recv(a->recv, a->size, RRT_BYTE, 0, kTag, RRT_COMM_WORLD, RRT_STATUS_IGNORE),
            "rrt_recv");
      check(rrt_send(a->send, a->size, RRT_BYTE, 0, kTag, RRT_COMM_WORLD), "rrt_send");
    }
  }
  return (rrt_wtime() - start) * 1e6 / (2.0 * static_cast<double>(a->iters));
}

}  // namespace

int main(int argc, char** argv) {
  pt2pt_bench bench{"rrt_latency", rrt::apps::title("Latency Test"), BENCH_LATENCY, measure};
  return rrt::apps::pt2ptMain(argc, argv, bench);
}

// The protocol engine as rank 0 of a two-rank job without PMIx (Engine::initLocal), rank 1
// reached through a transport the test scripts. Shared by tests/unit/rndv_error_test,
// tests/unit/gpu_rndv_test and tests/fuzz/fuzz_engine_am.
#pragma once

#include <vector>

#include "runtime/proto/engine.h"
#include "runtime/transport/self/self_transport.h"
#include "runtime/wireup/wireup.h"

namespace rrt::test {

// Starts the engine with the self transport and peer (rank 1; the engine takes ownership), rank
// 1 on this node or on another one.
inline Status startRankZeroOfTwo(const char* jobId, bool sameNode, transport::Transport* peer) {
  wireup::JobInfo job;
  job.rank = 0;
  job.size = 2;
  job.jobId = jobId;
  job.localPeers = sameNode ? std::vector<int>{0, 1} : std::vector<int>{0};
  job.nodeOf = {0, sameNode ? 0u : 1u};
  transport::Context ctx;
  ctx.rank = 0;
  ctx.size = 2;
  ctx.localPeers = job.localPeers;
  ctx.nodeOf = job.nodeOf;
  ctx.jobId = job.jobId;
  ctx.amHandler = &proto::Engine::deliver;
  ctx.handlerArg = &proto::engine();
  std::vector<transport::TransportPtr> txs;
  Status st;
  txs.push_back(transport::self::create(ctx, &st));
  txs.push_back(transport::TransportPtr(peer));
  return proto::engine().initLocal(job, std::move(txs));
}

}  // namespace rrt::test

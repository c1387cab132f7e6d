// PmixServer: rrun's side of PMIx, the libpmix server for the ranks started on this node.
//
// Lifecycle (main thread only): start() once, registerJob() once, registerRanks(), then per rank
// setupFork() before its fork, answer*() for upcalls popped from the UpcallQueue, and finally
// shutdown(). PMIx is a process-wide singleton, so at most one PmixServer may exist.
//
// Threading: PMIx runs its own progress thread and calls the host module there. The module only
// queues an Upcall (and acknowledges client finalize at once, so a rank's PMIx_Finalize never waits
// for the launcher's loop); everything else happens on the main thread. Signals must already be
// blocked when start() is called, so PMIx's threads inherit the mask.
//
// Errors are returned as text ("" = success). Every wait for a PMIx callback is bounded; after a
// timeout the server must be considered broken and the job torn down.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "launcher/job_map.h"
#include "launcher/rank_env.h"
#include "launcher/upcall_queue.h"

namespace rrt::launcher {

class PmixServer {
 public:
  explicit PmixServer(UpcallQueue* queue);
  ~PmixServer();  // calls shutdown() with a short bound if still running
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // tmpdir: a private directory for PMIx's rendezvous files (server and system tmpdir).
  std::string start(const std::string& tmpdir);

  // Registers the job (all job/node/app/proc keys for every node of `map`), runs
  // setup_application and setup_local_support for the local node. wdir: the ranks' working dir.
  std::string registerJob(const std::string& nspace, const JobMap& map, const std::string& wdir);

  // Registers the local ranks with the uid/gid they will run as.
  std::string registerRanks(const std::vector<int>& ranks, uid_t uid, gid_t gid);

  // Adds the PMIx variables a client needs (PMIX_NAMESPACE, PMIX_RANK, server URI, ...) to env.
  std::string setupFork(int rank, EnvList* env);

  // Fence across nodes: with one node the collected data is the node's own blob. Answers and
  // frees the upcall's data.
  void answerFence(Upcall* upcall);
  // Releases a client blocked in PMIx_Abort.
  void answerAbort(Upcall* upcall);
  // Direct modex request for a rank: served from this node's PMIx server.
  void answerDirectModex(const Upcall& upcall);

  // Deregisters the job and finalizes PMIx, waiting at most `seconds` (the work runs on a helper
  // thread; a PMIx that does not come back is abandoned). Returns false on timeout.
  bool shutdown(double seconds);

 private:
  UpcallQueue* queue_;
  std::string nspace_;
  bool started_ = false;
  bool registered_ = false;
};

}  // namespace rrt::launcher

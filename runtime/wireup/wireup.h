// Wire-up: who we are and how to reach the others, through PMIx.
//
// Ranks are plain PMIx clients, so the same binary runs under rrun, Open MPI's mpirun and
// Slurm's srun --mpi=pmix. Without a launcher (PMIx_Init fails with PMIX_ERR_UNREACH and
// PMIX_NAMESPACE is unset) the process is a world of one rank and no PMIx call is made again.
//
// Each transport publishes its address under "rrt.<transport>" (publish), one fence makes them
// visible (without data collection: peers are looked up lazily, on first contact, which is
// what large jobs want), and lookup fetches one peer's blob when needed. barrier is a fence
// that also collects the data: under Slurm 22.05's srun --mpi=pmix with OpenPMIx 4.2.2 (Debian
// 12) a fence without data collection completes on each node as soon as that node's own ranks
// arrived, so only a collecting fence holds every rank until all have reached it (measured:
// rank 0 held 2 s before its fence; its node B peers passed a plain fence at once, a collecting
// one after 2 s). Use barrier wherever ranks on other nodes must have arrived.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace rrt::wireup {

struct JobInfo {
  int rank = 0;
  int size = 1;
  std::string nspace;              // PMIx namespace ("" for a singleton)
  std::string jobId;               // nspace made safe for file names
  std::string hostname;
  std::vector<int> localPeers;     // world ranks on this node, ascending, self included
  std::vector<uint32_t> nodeOf;    // node id of every world rank
  bool singleton = false;
  std::string secret;              // kSecretBytes from the launcher ("rrt.secret"), or empty
};

// The job-level PMIx key under which rrun hands every rank the job's secret (hex string of
// kSecretBytes random bytes). Launchers that do not set it (mpirun, srun) leave it empty; the
// TCP transport then takes one that rank 0 publishes (runtime/transport/tcp/tcp_transport.h).
constexpr const char* kSecretKey = "rrt.secret";
constexpr size_t kSecretBytes = 32;

Status init(JobInfo* job);
Status publish(const std::string& key, const void* data, size_t len);
Status fence();
Status barrier();
// barrier() that keeps rrt's progress engine running while it waits (core::waitFor), so that
// this rank still answers its peers (a Cancel, a FIN) until every rank has arrived.
Status barrierProgressing();
Status lookup(int rank, const std::string& key, std::vector<uint8_t>* out);
// Tells the launcher to end the job with this code; returns only if that failed.
void abortJob(int code, const char* message);
void finalize();

// nspace with every character outside [A-Za-z0-9_.-] replaced by '_'.
std::string safeJobId(const std::string& nspace);

}  // namespace rrt::wireup

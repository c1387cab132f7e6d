// The PMIx client behind wireup.h. See ../shared/notes/pmix-4.2.2.md for the behaviours of
// OpenPMIx 4.2.2 this code is written around (singleton rule, finalize after failed init).
#include <pmix.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unistd.h>

#include <atomic>

#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/wireup/wireup.h"

namespace rrt::wireup {
namespace {

pmix_proc_t gMe;
bool gPmixUp = false;

Status fromPmix(pmix_status_t rc) { return rc == PMIX_SUCCESS ? Status::Ok : Status::ErrWireup; }

// Reads an integer key of the job (or of one proc).
Status getUint(const pmix_proc_t* proc, const char* key, uint64_t* out) {
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(proc, key, nullptr, 0, &val);
  if (rc != PMIX_SUCCESS || !val) return Status::ErrWireup;
  Status st = Status::Ok;
  switch (val->type) {
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_UINT64: *out = val->data.uint64; break;
    case PMIX_INT: *out = static_cast<uint64_t>(val->data.integer); break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    case PMIX_SIZE: *out = val->data.size; break;
    default: st = Status::ErrWireup;
  }
  PMIX_VALUE_RELEASE(val);
  return st;
}

Status getString(const pmix_proc_t* proc, const char* key, std::string* out) {
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(proc, key, nullptr, 0, &val);
  if (rc != PMIX_SUCCESS || !val) return Status::ErrWireup;
  Status st = Status::ErrWireup;
  if (val->type == PMIX_STRING && val->data.string) {
    *out = val->data.string;
    st = Status::Ok;
  }
  PMIX_VALUE_RELEASE(val);
  return st;
}

// The job secret from the launcher, if it gave one: a job-level key, asked for without a
// round trip to the server (PMIX_OPTIONAL), so a launcher that lacks it answers at once.
std::string jobSecret(const pmix_proc_t* wild) {
  pmix_info_t opt;
  bool yes = true;
  PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
  pmix_value_t* val = nullptr;
  std::string out;
  if (PMIx_Get(wild, kSecretKey, &opt, 1, &val) == PMIX_SUCCESS && val) {
    if (val->type == PMIX_STRING && val->data.string &&
        strlen(val->data.string) == 2 * kSecretBytes) {
      const char* h = val->data.string;
      for (size_t i = 0; i < kSecretBytes; ++i) {
        unsigned v = 0;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) {
          out.clear();
          break;
        }
        out.push_back(static_cast<char>(v));
      }
    }
    PMIX_VALUE_RELEASE(val);
  }
  PMIX_INFO_DESTRUCT(&opt);
  return out;
}

void initSingleton(JobInfo* job) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  job->rank = 0;
  job->size = 1;
  job->hostname = host;
  job->nspace.clear();
  job->jobId = safeJobId("singleton-" + job->hostname + "-" + std::to_string(getpid()));
  job->localPeers = {0};
  job->nodeOf = {0};
  job->singleton = true;
}

// Node of every rank from the job's node and process maps (PMIX_NODE_MAP, PMIX_PROC_MAP), for
// launchers that give no PMIX_NODEID for remote ranks (Open MPI 4.1's mpirun): node i is the
// i-th of the job's host names in sorted order, the same on every rank. False when the maps do
// not cover every rank exactly once.
bool nodeIdsFromMap(const pmix_proc_t& me, int size, std::vector<uint32_t>* out) {
  char* list = nullptr;
  if (PMIx_Resolve_nodes(me.nspace, &list) != PMIX_SUCCESS || !list) return false;
  std::vector<std::string> hosts;
  std::stringstream ss(list);
  free(list);
  std::string h;
  while (std::getline(ss, h, ','))
    if (!h.empty()) hosts.push_back(h);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  std::vector<int64_t> node(static_cast<size_t>(size), -1);
  for (size_t i = 0; i < hosts.size(); ++i) {
    pmix_proc_t* procs = nullptr;
    size_t n = 0;
    if (PMIx_Resolve_peers(hosts[i].c_str(), me.nspace, &procs, &n) != PMIX_SUCCESS) return false;
    bool good = true;
    for (size_t k = 0; k < n; ++k) {
      const pmix_rank_t r = procs[k].rank;
      if (r >= static_cast<pmix_rank_t>(size) || node[r] >= 0) good = false;
      else node[r] = static_cast<int64_t>(i);
    }
    if (procs) PMIX_PROC_FREE(procs, n);
    if (!good) return false;
  }
  out->resize(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    if (node[static_cast<size_t>(r)] < 0) return false;
    (*out)[static_cast<size_t>(r)] = static_cast<uint32_t>(node[static_cast<size_t>(r)]);
  }
  return true;
}

}  // namespace

std::string safeJobId(const std::string& nspace) {
  std::string s = nspace;
  for (char& c : s) {
    bool okChar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
    if (!okChar) c = '_';
  }
  return s;
}

Status init(JobInfo* job) {
  const char* ns = getenv("PMIX_NAMESPACE");
  if (!ns) {
    const char* ntasks = getenv("SLURM_NTASKS");
    if (ntasks && atoi(ntasks) > 1) {
      RRT_ERROR("started by srun without --mpi=pmix (SLURM_NTASKS=%s, no PMIx): use "
                "srun --mpi=pmix, or rrun", ntasks);
      return Status::ErrWireup;
    }
    // No launcher: a world of one rank (PMIx_Init would only fail after ~15 ms).
    initSingleton(job);
    return Status::Ok;
  }
  pmix_status_t rc = PMIx_Init(&gMe, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    // Never PMIx_Finalize after a failed init (crashes in 4.2.2).
    RRT_ERROR("PMIx_Init failed: %s (PMIX_NAMESPACE=%s)", PMIx_Error_string(rc), ns);
    return Status::ErrWireup;
  }
  gPmixUp = true;
  job->singleton = false;
  job->rank = static_cast<int>(gMe.rank);
  job->nspace = gMe.nspace;
  job->jobId = safeJobId(job->nspace);

  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, gMe.nspace, PMIX_RANK_WILDCARD);
  uint64_t size = 0;
  // PMIX_JOB_SIZE, not PMIX_UNIV_SIZE: under mpirun the latter is the slot count.
  if (getUint(&wild, PMIX_JOB_SIZE, &size) != Status::Ok || size == 0) {
    RRT_ERROR("PMIx: no job size");
    return Status::ErrWireup;
  }
  job->size = static_cast<int>(size);

  std::string peers;
  job->localPeers.clear();
  if (getString(&wild, PMIX_LOCAL_PEERS, &peers) == Status::Ok) {
    std::stringstream ss(peers);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) continue;
      int r = atoi(item.c_str());
      if (r >= 0 && r < job->size) job->localPeers.push_back(r);
    }
  }
  bool selfListed = false;
  for (int r : job->localPeers) selfListed |= r == job->rank;
  if (!selfListed) job->localPeers.push_back(job->rank);
  std::sort(job->localPeers.begin(), job->localPeers.end());

  // Node of every rank: from PMIx (PMIX_NODEID, else the job's maps), never from our own
  // idea of host names. Every rank must reach the same answer: the node-aware collectives
  // build their trees from it.
  job->nodeOf.assign(static_cast<size_t>(job->size), 0);
  uint64_t myNode = 0;
  (void)getUint(&gMe, PMIX_NODEID, &myNode);  // 0 if the launcher does not say
  bool allKnown = true;
  for (int r = 0; r < job->size; ++r) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, gMe.nspace, static_cast<pmix_rank_t>(r));
    uint64_t node = 0;
    bool local = std::binary_search(job->localPeers.begin(), job->localPeers.end(), r);
    if (local) {
      node = myNode;
    } else if (getUint(&p, PMIX_NODEID, &node) != Status::Ok) {
      allKnown = false;
      break;
    }
    job->nodeOf[static_cast<size_t>(r)] = static_cast<uint32_t>(node);
  }
  if (!allKnown) {
    std::vector<uint32_t> fromMap;
    bool agrees = nodeIdsFromMap(gMe, job->size, &fromMap);
    // The map must say what PMIX_LOCAL_PEERS says about this node.
    for (int r = 0; agrees && r < job->size; ++r) {
      const bool local = std::binary_search(job->localPeers.begin(), job->localPeers.end(), r);
      agrees = local == (fromMap[static_cast<size_t>(r)] == fromMap[static_cast<size_t>(job->rank)]);
    }
    if (agrees) {
      job->nodeOf = fromMap;
    } else {
      // Last resort, the same on every rank: each rank a node of its own for the node-aware
      // collectives (they fall back to flat algorithms); shared memory still serves the
      // PMIX_LOCAL_PEERS ranks.
      RRT_WARN("PMIx: no node of the remote ranks from the launcher; node-aware collectives off");
      for (int r = 0; r < job->size; ++r) job->nodeOf[static_cast<size_t>(r)] = static_cast<uint32_t>(r);
    }
  }
  if (log::enabled(log::Level::Debug)) {
    std::string nodes;
    for (uint32_t n : job->nodeOf) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    RRT_DEBUG("PMIx: rank %d of %d, %zu local, node of every rank: %s", job->rank, job->size,
              job->localPeers.size(), nodes.c_str());
  }

  std::string host;
  if (getString(&gMe, PMIX_HOSTNAME, &host) != Status::Ok) {
    char buf[256] = "localhost";
    gethostname(buf, sizeof buf - 1);
    host = buf;
  }
  job->hostname = host;
  job->secret = jobSecret(&wild);
  return Status::Ok;
}

Status publish(const std::string& key, const void* data, size_t len) {
  if (!gPmixUp) return Status::Ok;
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = static_cast<char*>(const_cast<void*>(data));
  v.data.bo.size = len;
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Put(%s): %s", key.c_str(), PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  return Status::Ok;
}

namespace {
Status fenceAll(bool collect) {
  if (!gPmixUp) return Status::Ok;
  pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Commit: %s", PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, gMe.nspace, PMIX_RANK_WILDCARD);
  pmix_info_t info;
  bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  rc = PMIx_Fence(&wild, 1, collect ? &info : nullptr, collect ? 1 : 0);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Fence: %s", PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  return Status::Ok;
}
}  // namespace

Status fence() { return fenceAll(false); }
Status barrier() { return fenceAll(true); }

Status barrierProgressing() {
  if (!gPmixUp) return Status::Ok;
  pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Commit: %s", PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  struct Done {
    std::atomic<bool> flag{false};
    std::atomic<int> rc{PMIX_SUCCESS};
  } done;
  // Runs on PMIx's progress thread.
  auto onFence = [](pmix_status_t status, void* arg) {
    Done* d = static_cast<Done*>(arg);
    d->rc.store(status, std::memory_order_relaxed);
    d->flag.store(true, std::memory_order_release);
  };
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, gMe.nspace, PMIX_RANK_WILDCARD);
  pmix_info_t info;
  bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  // info and done must outlive the fence: PMIx keeps them until the callback has run.
  rc = PMIx_Fence_nb(&wild, 1, &info, 1, onFence, &done);
  if (rc == PMIX_OPERATION_SUCCEEDED) done.flag.store(true);  // completed in the call
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    PMIX_INFO_DESTRUCT(&info);
    RRT_ERROR("PMIx_Fence_nb: %s", PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  Status st = core::waitFor([&done] { return done.flag.load(std::memory_order_acquire); });
  // Timed out (RRT_TIMEOUT): the callback may still come and write into done; wait it out.
  while (!done.flag.load(std::memory_order_acquire)) usleep(1000);
  PMIX_INFO_DESTRUCT(&info);
  if (st != Status::Ok) return st;
  if (done.rc.load(std::memory_order_relaxed) != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Fence_nb: %s", PMIx_Error_string(done.rc.load()));
    return Status::ErrWireup;
  }
  return Status::Ok;
}

Status lookup(int rank, const std::string& key, std::vector<uint8_t>* out) {
  if (!gPmixUp) return Status::ErrWireup;
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, gMe.nspace, static_cast<pmix_rank_t>(rank));
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(&p, key.c_str(), nullptr, 0, &val);
  if (rc != PMIX_SUCCESS || !val) {
    RRT_DEBUG("PMIx_Get(rank %d, %s): %s", rank, key.c_str(), PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  Status st = Status::ErrWireup;
  if (val->type == PMIX_BYTE_OBJECT) {
    out->assign(val->data.bo.bytes, val->data.bo.bytes + val->data.bo.size);
    st = Status::Ok;
  }
  PMIX_VALUE_RELEASE(val);
  return fromPmix(st == Status::Ok ? PMIX_SUCCESS : PMIX_ERROR);
}

void abortJob(int code, const char* message) {
  if (gPmixUp) PMIx_Abort(code, message, nullptr, 0);
}

void finalize() {
  if (!gPmixUp) return;
  gPmixUp = false;
  PMIx_Finalize(nullptr, 0);
}

}  // namespace rrt::wireup

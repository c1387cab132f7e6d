// The PMIx client behind wireup.h. See ../shared/notes/pmix-4.2.2.md for the behaviours of
// OpenPMIx 4.2.2 this code is written around (singleton rule, finalize after failed init).
#include <pmix.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unistd.h>

#include "runtime/core/log.h"
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

  // Node of every rank: from PMIx, never from host names.
  job->nodeOf.assign(static_cast<size_t>(job->size), 0);
  uint64_t myNode = 0;
  (void)getUint(&gMe, PMIX_NODEID, &myNode);  // 0 if the launcher does not say
  for (int r = 0; r < job->size; ++r) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, gMe.nspace, static_cast<pmix_rank_t>(r));
    uint64_t node = 0;
    bool local = std::binary_search(job->localPeers.begin(), job->localPeers.end(), r);
    if (local) {
      node = myNode;
    } else if (getUint(&p, PMIX_NODEID, &node) != Status::Ok) {
      node = myNode + 1 + static_cast<uint64_t>(r);  // unknown: treat as another node
    }
    job->nodeOf[static_cast<size_t>(r)] = static_cast<uint32_t>(node);
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

Status fence() {
  if (!gPmixUp) return Status::Ok;
  pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Commit: %s", PMIx_Error_string(rc));
    return Status::ErrWireup;
  }
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, gMe.nspace, PMIX_RANK_WILDCARD);
  rc = PMIx_Fence(&wild, 1, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    RRT_ERROR("PMIx_Fence: %s", PMIx_Error_string(rc));
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

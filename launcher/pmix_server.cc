#include "launcher/pmix_server.h"

#include "launcher/job_secret.h"

#include <pmix.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rrt::launcher {
namespace {

constexpr double kRegisterTimeoutSeconds = 10.0;

// PMIx has no user pointer on fence/dmodex upcalls; the server is a process singleton anyway.
UpcallQueue* gQueue = nullptr;

// A bounded wait for one pmix_op_cbfunc_t. Shared ownership: a callback arriving after the waiter
// gave up still finds valid memory.
struct OpWait {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
};
using OpWaitPtr = std::shared_ptr<OpWait>;

void opDone(pmix_status_t status, void* cbdata) {
  auto* holder = static_cast<OpWaitPtr*>(cbdata);
  {
    std::lock_guard<std::mutex> lock((*holder)->mutex);
    (*holder)->status = status;
    (*holder)->done = true;
  }
  (*holder)->cv.notify_all();
  delete holder;
}

// Runs `call(cbfunc, cbdata)` and waits for its callback; returns the final status.
template <typename Call>
pmix_status_t callAndWait(Call call, double seconds) {
  auto wait = std::make_shared<OpWait>();
  auto* holder = new OpWaitPtr(wait);
  pmix_status_t rc = call(opDone, holder);
  if (rc == PMIX_OPERATION_SUCCEEDED) {
    delete holder;
    return PMIX_SUCCESS;
  }
  if (rc != PMIX_SUCCESS) {
    delete holder;
    return rc;
  }
  std::unique_lock<std::mutex> lock(wait->mutex);
  if (!wait->cv.wait_for(lock, std::chrono::duration<double>(seconds),
                         [&] { return wait->done; })) {
    return PMIX_ERR_TIMEOUT;
  }
  return wait->status;
}

std::string pmixError(const char* what, pmix_status_t rc) {
  return std::string(what) + " failed: " + PMIx_Error_string(rc);
}

// ---- host module upcalls (PMIx progress thread) ----

pmix_status_t onClientConnected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc,
                                void* cbdata) {
  Upcall u;
  u.kind = Upcall::Kind::Connected;
  u.rank = proc->rank;
  gQueue->push(std::move(u));
  if (cbfunc) {  // 4.2.2 passes NULL; a later version may not
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t onClientFinalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc,
                                void* cbdata) {
  Upcall u;
  u.kind = Upcall::Kind::Finalized;
  u.rank = proc->rank;
  gQueue->push(std::move(u));  // queued before the ack, so before the client can exit
  if (cbfunc) {
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
  }
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t onAbort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                      size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  // Any abort ends the whole job (the procs list is not honoured: rrun runs one job).
  Upcall u;
  u.kind = Upcall::Kind::Abort;
  u.rank = proc->rank;
  u.status = status;
  u.message = msg ? msg : "";
  u.opCallback = cbfunc;
  u.opCallbackData = cbdata;
  gQueue->push(std::move(u));
  return PMIX_SUCCESS;
}

pmix_status_t onFence(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                      size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  Upcall u;
  u.kind = Upcall::Kind::Fence;
  u.data = data;
  u.ndata = ndata;
  u.modexCallback = cbfunc;
  u.modexCallbackData = cbdata;
  gQueue->push(std::move(u));
  return PMIX_SUCCESS;
}

pmix_status_t onDirectModex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                            pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  Upcall u;
  u.kind = Upcall::Kind::DirectModex;
  u.rank = proc->rank;
  u.modexCallback = cbfunc;
  u.modexCallbackData = cbdata;
  gQueue->push(std::move(u));
  return PMIX_SUCCESS;
}

void freeBlob(void* blob) { std::free(blob); }

struct DmodexContext {
  pmix_modex_cbfunc_t callback;
  void* callbackData;
};

// PMIx frees `data` when this returns: hand the requester a copy.
void onDmodexReply(pmix_status_t status, char* data, size_t size, void* cbdata) {
  auto* ctx = static_cast<DmodexContext*>(cbdata);
  char* copy = nullptr;
  if (status == PMIX_SUCCESS && size > 0) {
    copy = static_cast<char*>(std::malloc(size));
    if (copy) {
      std::memcpy(copy, data, size);
    } else {
      status = PMIX_ERR_NOMEM;
      size = 0;
    }
  }
  ctx->callback(status, copy, copy ? size : 0, ctx->callbackData, copy ? freeBlob : nullptr, copy);
  delete ctx;
}

struct SetupAppResult {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

void onSetupApplication(pmix_status_t status, pmix_info_t info[], size_t ninfo, void* provided,
                        pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto* holder = static_cast<std::shared_ptr<SetupAppResult>*>(provided);
  SetupAppResult& r = **holder;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.status = status;
    if (status == PMIX_SUCCESS && ninfo > 0) {
      PMIX_INFO_CREATE(r.info, ninfo);
      r.ninfo = ninfo;
      for (size_t i = 0; i < ninfo; ++i) PMIx_Info_xfer(&r.info[i], &info[i]);
    }
    r.done = true;
  }
  r.cv.notify_all();
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);  // releases PMIx's copy of `info`
  delete holder;
}

// Builders for nested info arrays. PMIx_Info_list_add copies the value, so temporaries may go.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() { PMIx_Info_list_release(list_); }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void add(const char* key, const void* value, pmix_data_type_t type) {
    if (PMIx_Info_list_add(list_, key, value, type) != PMIX_SUCCESS) failed_ = true;
  }
  void addString(const char* key, const std::string& s) { add(key, s.c_str(), PMIX_STRING); }
  void addU32(const char* key, uint32_t v) { add(key, &v, PMIX_UINT32); }
  void addU16(const char* key, uint16_t v) { add(key, &v, PMIX_UINT16); }
  void addRank(const char* key, pmix_rank_t v) { add(key, &v, PMIX_PROC_RANK); }
  void addBool(const char* key, bool v) { add(key, &v, PMIX_BOOL); }
  void addArray(const char* key, InfoList& inner) {
    pmix_data_array_t darray;
    if (!inner.convert(&darray)) {
      failed_ = true;
      return;
    }
    add(key, &darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
  }
  bool convert(pmix_data_array_t* out) {
    if (failed_) return false;
    return PMIx_Info_list_convert(list_, out) == PMIX_SUCCESS;
  }
  bool failed() const { return failed_; }

 private:
  void* list_;
  bool failed_ = false;
};

}  // namespace

PmixServer::PmixServer(UpcallQueue* queue) : queue_(queue) {}

PmixServer::~PmixServer() {
  if (started_) shutdown(2.0);
}

std::string PmixServer::start(const std::string& tmpdir) {
  gQueue = queue_;
  static pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.client_connected = onClientConnected;
  module.client_finalized = onClientFinalized;
  module.abort = onAbort;
  module.fence_nb = onFence;
  module.direct_modex = onDirectModex;

  InfoList info;
  info.addString(PMIX_SERVER_TMPDIR, tmpdir);
  info.addString(PMIX_SYSTEM_TMPDIR, tmpdir);
  pmix_data_array_t darray;
  if (!info.convert(&darray)) return "building the PMIx server options failed";
  pmix_status_t rc =
      PMIx_server_init(&module, static_cast<pmix_info_t*>(darray.array), darray.size);
  PMIX_DATA_ARRAY_DESTRUCT(&darray);
  if (rc != PMIX_SUCCESS) return pmixError("PMIx_server_init", rc);
  started_ = true;
  return "";
}

std::string PmixServer::registerJob(const std::string& nspace, const JobMap& map,
                                    const std::string& wdir) {
  nspace_ = nspace;
  const uint32_t size = static_cast<uint32_t>(map.size());
  InfoList job;
  job.addString(PMIX_JOBID, nspace);
  job.addU32(PMIX_UNIV_SIZE, size);
  job.addU32(PMIX_JOB_SIZE, size);
  job.addU32(PMIX_MAX_PROCS, size);
  job.addU32(PMIX_NUM_NODES, static_cast<uint32_t>(map.numNodes()));
  job.addU32(PMIX_JOB_NUM_APPS, 1);
  job.addRank(PMIX_NPROC_OFFSET, 0);
  job.addBool(PMIX_TDIR_RMCLEAN, true);
  const std::string secret = newJobSecretHex();
  if (secret.empty()) return "cannot make the job secret (getrandom failed)";
  job.addString("rrt.secret", secret);  // wireup::kSecretKey

  char* nodeRegex = nullptr;
  char* procRegex = nullptr;
  pmix_status_t rc = PMIx_generate_regex(map.hostList().c_str(), &nodeRegex);
  if (rc != PMIX_SUCCESS) return pmixError("PMIx_generate_regex", rc);
  rc = PMIx_generate_ppn(map.ppnList().c_str(), &procRegex);
  if (rc != PMIX_SUCCESS) {
    std::free(nodeRegex);
    return pmixError("PMIx_generate_ppn", rc);
  }
  job.add(PMIX_NODE_MAP, nodeRegex, PMIX_STRING);
  job.add(PMIX_PROC_MAP, procRegex, PMIX_STRING);
  std::free(nodeRegex);
  std::free(procRegex);

  // Node-level keys, one array per node. The local node's LOCAL_* keys are also given at job
  // level: clients read PMIX_LOCAL_SIZE/PEERS without naming a node.
  for (int n = 0; n < map.numNodes(); ++n) {
    const NodeRanks& node = map.nodes()[n];
    InfoList ni;
    ni.addU32(PMIX_NODEID, static_cast<uint32_t>(n));
    ni.addString(PMIX_HOSTNAME, node.hostname);
    ni.addU32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(node.ranks.size()));
    ni.addU32(PMIX_NODE_SIZE, static_cast<uint32_t>(node.ranks.size()));
    ni.addString(PMIX_LOCAL_PEERS, JobMap::rankList(node));
    ni.addRank(PMIX_LOCALLDR, node.ranks.empty() ? 0 : static_cast<pmix_rank_t>(node.ranks[0]));
    job.addArray(PMIX_NODE_INFO_ARRAY, ni);
  }
  const NodeRanks& local = map.local();
  job.addU32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(local.ranks.size()));
  job.addString(PMIX_LOCAL_PEERS, JobMap::rankList(local));

  InfoList app;
  app.addU32(PMIX_APPNUM, 0);
  app.addU32(PMIX_APP_SIZE, size);
  app.addRank(PMIX_APPLDR, 0);
  app.addString(PMIX_WDIR, wdir);
  job.addArray(PMIX_APP_INFO_ARRAY, app);

  for (int r = 0; r < map.size(); ++r) {
    const int node = map.nodeOf(r);
    InfoList proc;
    proc.addRank(PMIX_RANK, static_cast<pmix_rank_t>(r));  // must come first
    proc.addRank(PMIX_GLOBAL_RANK, static_cast<pmix_rank_t>(r));
    proc.addRank(PMIX_APP_RANK, static_cast<pmix_rank_t>(r));
    proc.addU32(PMIX_APPNUM, 0);
    proc.addU16(PMIX_LOCAL_RANK, static_cast<uint16_t>(map.localRankOf(r)));
    proc.addU16(PMIX_NODE_RANK, static_cast<uint16_t>(map.localRankOf(r)));
    proc.addU32(PMIX_NODEID, static_cast<uint32_t>(node));
    proc.addString(PMIX_HOSTNAME, map.nodes()[node].hostname);
    job.addArray(PMIX_PROC_DATA, proc);
  }

  pmix_data_array_t darray;
  if (!job.convert(&darray)) return "building the PMIx job description failed";
  auto* info = static_cast<pmix_info_t*>(darray.array);
  const int nlocal = static_cast<int>(local.ranks.size());
  rc = callAndWait(
      [&](pmix_op_cbfunc_t cb, void* cbdata) {
        return PMIx_server_register_nspace(nspace.c_str(), nlocal, info, darray.size, cb, cbdata);
      },
      kRegisterTimeoutSeconds);
  // On timeout PMIx may still read `info`: leak it rather than free it under its feet.
  if (rc != PMIX_ERR_TIMEOUT) PMIX_DATA_ARRAY_DESTRUCT(&darray);
  if (rc != PMIX_SUCCESS) return pmixError("PMIx_server_register_nspace", rc);
  registered_ = true;

  // setup_application (once per job), then setup_local_support (once per node).
  auto result = std::make_shared<SetupAppResult>();
  auto* holder = new std::shared_ptr<SetupAppResult>(result);
  rc = PMIx_server_setup_application(nspace.c_str(), nullptr, 0, onSetupApplication, holder);
  if (rc != PMIX_SUCCESS) {
    delete holder;
    return pmixError("PMIx_server_setup_application", rc);
  }
  {
    std::unique_lock<std::mutex> lock(result->mutex);
    if (!result->cv.wait_for(lock, std::chrono::duration<double>(kRegisterTimeoutSeconds),
                             [&] { return result->done; })) {
      return pmixError("PMIx_server_setup_application", PMIX_ERR_TIMEOUT);
    }
  }
  if (result->status != PMIX_SUCCESS) {
    return pmixError("PMIx_server_setup_application", result->status);
  }
  rc = callAndWait(
      [&](pmix_op_cbfunc_t cb, void* cbdata) {
        return PMIx_server_setup_local_support(nspace.c_str(), result->info, result->ninfo, cb,
                                               cbdata);
      },
      kRegisterTimeoutSeconds);
  if (rc != PMIX_ERR_TIMEOUT && result->info) PMIX_INFO_FREE(result->info, result->ninfo);
  if (rc != PMIX_SUCCESS) return pmixError("PMIx_server_setup_local_support", rc);
  return "";
}

std::string PmixServer::registerRanks(const std::vector<int>& ranks, uid_t uid, gid_t gid) {
  // All registrations are issued first and awaited together: one round trip through PMIx's
  // thread instead of one per rank.
  std::vector<OpWaitPtr> waits;
  pmix_status_t rc = PMIX_SUCCESS;
  for (int rank : ranks) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
    auto wait = std::make_shared<OpWait>();
    auto* holder = new OpWaitPtr(wait);
    rc = PMIx_server_register_client(&proc, uid, gid, nullptr, opDone, holder);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
      delete holder;
      continue;
    }
    if (rc != PMIX_SUCCESS) {
      delete holder;
      break;
    }
    waits.push_back(wait);
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(kRegisterTimeoutSeconds));
  for (auto& wait : waits) {
    std::unique_lock<std::mutex> lock(wait->mutex);
    if (!wait->cv.wait_until(lock, deadline, [&] { return wait->done; })) {
      rc = PMIX_ERR_TIMEOUT;
    } else if (wait->status != PMIX_SUCCESS && rc == PMIX_SUCCESS) {
      rc = wait->status;
    }
  }
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    return pmixError("PMIx_server_register_client", rc);
  }
  return "";
}

std::string PmixServer::setupFork(int rank, EnvList* env) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
  // PMIx reallocs the array: it must be malloc'ed and NULL-terminated.
  char** array = static_cast<char**>(std::calloc(env->size() + 1, sizeof(char*)));
  if (!array) return "out of memory";
  for (std::size_t i = 0; i < env->size(); ++i) array[i] = strdup((*env)[i].c_str());
  pmix_status_t rc = PMIx_server_setup_fork(&proc, &array);
  if (rc == PMIX_SUCCESS) {
    env->clear();
    for (char** p = array; *p; ++p) env->emplace_back(*p);
  }
  for (char** p = array; *p; ++p) std::free(*p);
  std::free(array);
  if (rc != PMIX_SUCCESS) return pmixError("PMIx_server_setup_fork", rc);
  return "";
}

void PmixServer::answerAbort(Upcall* upcall) {
  if (upcall->opCallback) upcall->opCallback(PMIX_SUCCESS, upcall->opCallbackData);
  upcall->opCallback = nullptr;
}

void PmixServer::answerFence(Upcall* upcall) {
  // Multi-node: this is where every node's blob would be gathered and concatenated.
  char* data = upcall->data;
  upcall->data = nullptr;
  if (upcall->modexCallback) {
    upcall->modexCallback(PMIX_SUCCESS, data, upcall->ndata, upcall->modexCallbackData,
                          data ? freeBlob : nullptr, data);
  } else {
    std::free(data);
  }
}

void PmixServer::answerDirectModex(const Upcall& upcall) {
  if (!upcall.modexCallback) return;
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace_.c_str(), upcall.rank);
  auto* ctx = new DmodexContext{upcall.modexCallback, upcall.modexCallbackData};
  pmix_status_t rc = PMIx_server_dmodex_request(&proc, onDmodexReply, ctx);
  if (rc != PMIX_SUCCESS) {
    delete ctx;
    upcall.modexCallback(rc, nullptr, 0, upcall.modexCallbackData, nullptr, nullptr);
  }
}

bool PmixServer::shutdown(double seconds) {
  if (!started_) return true;
  started_ = false;
  struct Teardown {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<Teardown>();
  std::string nspace = nspace_;
  bool registered = registered_;
  std::thread([state, nspace, registered, seconds] {
    if (registered) {
      callAndWait(
          [&](pmix_op_cbfunc_t cb, void* cbdata) {
            PMIx_server_deregister_nspace(nspace.c_str(), cb, cbdata);
            return PMIX_SUCCESS;
          },
          seconds);
    }
    PMIx_server_finalize();
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->done = true;
    }
    state->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(state->mutex);
  return state->cv.wait_for(lock, std::chrono::duration<double>(seconds),
                            [&] { return state->done; });
}

}  // namespace rrt::launcher

// Environment: init, finalize, abort, clocks, error strings, processor name.
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "runtime/api/api_check.h"
#include "runtime/api/runtime_state.h"
#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/engine.h"
#include "runtime/rma/window.h"
#include "runtime/wireup/wireup.h"

namespace rrt::api {

State gState = State::Uninitialized;

void abortProcess(int code, const char* why) {
  char msg[256];
  snprintf(msg, sizeof msg, "rrt_abort from rank %d: %s", proto::engine().rank(), why);
  wireup::abortJob(code ? code : 1, msg);
  _exit(code ? code : 1);
}

}  // namespace rrt::api

using namespace rrt;
using rrt::api::gState;
using rrt::api::State;

extern "C" {

int rrt_init(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  if (gState == State::Active) {
    RRT_WARN("rrt_init: already initialized");
    return RRT_ERR_ARG;
  }
  if (gState == State::Finalized) {
    RRT_WARN("rrt_init: called after rrt_finalize");
    return RRT_ERR_FINALIZED;
  }
  // GPU support first: a transport that registers device memory (verbs, GPUDirect RDMA) says
  // so in its capabilities when it is created.
  Status st = gpu::init();  // RRT_CUDA: loads libcuda when present (runtime/gpu/gpu.h)
  if (st == Status::Ok) {
    st = proto::engine().init();
    if (st != Status::Ok) gpu::shutdown();
  }
  if (st != Status::Ok) {
    RRT_ERROR("rrt_init failed: %s", statusName(st));
    return toC(st);
  }
  proto::commInitPredefined(proto::engine().rank(), proto::engine().size());
  gState = State::Active;
  return RRT_SUCCESS;
}

int rrt_finalize(void) {
  RRT_API_CHECK("rrt_finalize", nullptr, api::checkActive("rrt_finalize"));
  rma::finalizeAll();
  proto::engine().finalize();
  gpu::shutdown();
  proto::commFinalizeAll();
  gState = State::Finalized;
  return RRT_SUCCESS;
}

int rrt_initialized(int* flag) {
  if (!flag) return RRT_ERR_ARG;
  *flag = gState != State::Uninitialized;
  return RRT_SUCCESS;
}

int rrt_finalized(int* flag) {
  if (!flag) return RRT_ERR_ARG;
  *flag = gState == State::Finalized;
  return RRT_SUCCESS;
}

int rrt_cuda_support(int* flag) {
  if (!flag) return RRT_ERR_ARG;
  *flag = gpu::enabled() ? 1 : 0;
  return RRT_SUCCESS;
}

int rrt_abort(rrt_comm_t comm, int code) {
  (void)comm;  // rrt aborts the whole job whatever the communicator, as MPI implementations do
  char why[64];
  snprintf(why, sizeof why, "code %d", code);
  fprintf(stderr, "rrt: rank %d called rrt_abort with code %d\n",
          gState == State::Active ? proto::engine().rank() : 0, code);
  fflush(stderr);
  fflush(stdout);
  api::abortProcess(code, why);
}

double rrt_wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double rrt_wtick(void) {
  timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

const char* rrt_strerror(int code) {
  switch (code) {
    case RRT_SUCCESS: return "success";
    case RRT_ERR_ARG: return "invalid argument";
    case RRT_ERR_RANK: return "invalid rank";
    case RRT_ERR_TAG: return "invalid tag";
    case RRT_ERR_COUNT: return "invalid count";
    case RRT_ERR_BUFFER: return "invalid buffer";
    case RRT_ERR_TYPE: return "invalid datatype";
    case RRT_ERR_COMM: return "invalid communicator";
    case RRT_ERR_OP: return "invalid reduction operation";
    case RRT_ERR_ROOT: return "invalid root";
    case RRT_ERR_REQUEST: return "invalid request";
    case RRT_ERR_TRUNCATE: return "message truncated";
    case RRT_ERR_NOT_INITIALIZED: return "rrt is not initialized";
    case RRT_ERR_FINALIZED: return "rrt is finalized";
    case RRT_ERR_PROC_FAILED: return "peer process failed";
    case RRT_ERR_NO_MEMORY: return "out of memory";
    case RRT_ERR_TRANSPORT: return "transport error";
    case RRT_ERR_TIMEOUT: return "timed out";
    case RRT_ERR_UNSUPPORTED: return "not supported";
    case RRT_ERR_IN_STATUS: return "error in status";
    case RRT_ERR_WIREUP: return "launcher (PMIx) error";
    case RRT_ERR_INTERNAL: return "internal error";
    case RRT_ERR_RMA_RANGE: return "one-sided access outside the target window";
    case RRT_ERR_RMA_SYNC: return "one-sided call in the wrong synchronization state";
    case RRT_ERR_WIN: return "invalid window";
    default: return "unknown error code";
  }
}

int rrt_get_processor_name(char* name, size_t len) {
  if (!name || len == 0) return RRT_ERR_ARG;
  std::string host;
  if (gState == State::Active) {
    host = proto::engine().job().hostname;
  } else {
    char buf[256] = "";
    gethostname(buf, sizeof buf - 1);
    host = buf;
  }
  snprintf(name, len, "%s", host.c_str());
  return RRT_SUCCESS;
}

}  // extern "C"

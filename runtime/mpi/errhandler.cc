// Error codes, classes, strings and communicator error handlers.
//
// MPI's default handler is MPI_ERRORS_ARE_FATAL while rrt's is RRT_ERRORS_RETURN, and MPI errors
// also arise in this layer (bad groups, keyvals, topologies), so the layer keeps every rrt
// communicator at RRT_ERRORS_RETURN and applies the MPI handler itself, in one place: raise().
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

struct Errh {
  MPI_Comm_errhandler_function* fn = nullptr;
  int refs = 0;
};
Table<Errh>& errhs() {
  static Table<Errh> t = [] {
    Table<Errh> tt;
    tt.add(Errh{nullptr, 1 << 30});  // MPI_ERRORS_ARE_FATAL
    tt.add(Errh{nullptr, 1 << 30});  // MPI_ERRORS_RETURN
    return tt;
  }();
  return t;
}

// Codes above the classes carry the rrt cause: class | rrt code << 8.
constexpr int kDetailShift = 8;

const char* className(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduce operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid communicator topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid topology dimension";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument of some other kind";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY: info key not defined";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_INFO: return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid key value";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported";
    case MPIX_ERR_PROC_FAILED: return "MPIX_ERR_PROC_FAILED: a peer process failed";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_BASE: return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_DISP: return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT: invalid assert";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE: target memory is not part of the window";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH: memory cannot be attached";
    case MPI_ERR_RMA_SHARED: return "MPI_ERR_RMA_SHARED: memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    default: return nullptr;
  }
}

}  // namespace

int fromRrt(int rc) {
  switch (rc) {
    case RRT_SUCCESS: return MPI_SUCCESS;
    case RRT_ERR_ARG: return MPI_ERR_ARG;
    case RRT_ERR_RANK: return MPI_ERR_RANK;
    case RRT_ERR_TAG: return MPI_ERR_TAG;
    case RRT_ERR_COUNT: return MPI_ERR_COUNT;
    case RRT_ERR_BUFFER: return MPI_ERR_BUFFER;
    case RRT_ERR_TYPE: return MPI_ERR_TYPE;
    case RRT_ERR_COMM: return MPI_ERR_COMM;
    case RRT_ERR_OP: return MPI_ERR_OP;
    case RRT_ERR_ROOT: return MPI_ERR_ROOT;
    case RRT_ERR_REQUEST: return MPI_ERR_REQUEST;
    case RRT_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case RRT_ERR_PROC_FAILED: return MPIX_ERR_PROC_FAILED;
    case RRT_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case RRT_ERR_IN_STATUS: return MPI_ERR_IN_STATUS;
    case RRT_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION | (rc << kDetailShift);
    case RRT_ERR_INTERNAL: return MPI_ERR_INTERN | (rc << kDetailShift);
    case RRT_ERR_RMA_RANGE: return MPI_ERR_RMA_RANGE;
    case RRT_ERR_RMA_SYNC: return MPI_ERR_RMA_SYNC;
    case RRT_ERR_WIN: return MPI_ERR_WIN;
    default:
      if (rc > 0 && rc < RRT_ERR_LAST) return MPI_ERR_OTHER | (rc << kDetailShift);
      return MPI_ERR_UNKNOWN;
  }
}

void errhandlerRetain(MPI_Errhandler e) {
  if (Errh* h = errhs().get(handleIndex(e, kKindErrh))) ++h->refs;
}
void errhandlerRelease(MPI_Errhandler e) {
  int idx = handleIndex(e, kKindErrh);
  if (Errh* h = errhs().get(idx); h && --h->refs == 0) errhs().remove(idx);
}

void* errhandlerFn(MPI_Errhandler e) {
  Errh* h = errhs().get(handleIndex(e, kKindErrh));
  return h ? reinterpret_cast<void*>(h->fn) : nullptr;
}

bool errhandlerValid(MPI_Errhandler e) { return errhs().get(handleIndex(e, kKindErrh)) != nullptr; }

[[noreturn]] void fatal(int code, const char* fn, rrt_comm_t rc) {
  if (std::strncmp(fn, "PMPI_", 5) == 0) ++fn;  // the name the program called (pmpi.h)
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  PMPI_Error_string(code, msg, &len);
  int wr = 0;
  rrt_comm_rank(RRT_COMM_WORLD, &wr);
  std::fprintf(stderr, "rrt MPI [rank %d]: %s: %s (MPI_ERRORS_ARE_FATAL: aborting the job)\n",
               wr, fn, msg);
  std::fflush(stderr);
  rrt_abort(rc, code & 0xff ? code & 0xff : 1);
  _exit(code & 0xff ? code & 0xff : 1);  // rrt_abort does not return; make sure
}

int raise(MPI_Comm comm, int code, const char* fn) {
  if (code == MPI_SUCCESS) return code;
  MPI_Comm target = comm;
  Comm* c = commGet(comm);
  if (c == nullptr) {
    target = MPI_COMM_WORLD;
    c = commGet(MPI_COMM_WORLD);
  }
  if (c == nullptr) return code;  // before MPI_Init / after MPI_Finalize: nothing to apply
  if (c->errh == MPI_ERRORS_RETURN) return code;
  if (c->errh == MPI_ERRORS_ARE_FATAL) fatal(code, fn, c->rc);
  if (Errh* h = errhs().get(handleIndex(c->errh, kKindErrh)); h && h->fn) {
    int cc = code;
    h->fn(&target, &cc);
  }
  return code;
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Error_class);
int PMPI_Error_class(int errorcode, int* errorclass) {
  int cls = errorcode >= 0x100 ? (errorcode & 0xff) : errorcode;
  if (errorcode < 0 || className(cls) == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *errorclass = cls;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Error_string);
int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  int cls = errorcode >= 0x100 ? (errorcode & 0xff) : errorcode;
  const char* name = errorcode >= 0 ? className(cls) : nullptr;
  if (name == nullptr) {
    *resultlen = std::snprintf(string, MPI_MAX_ERROR_STRING, "unknown error code %d", errorcode);
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  }
  int n;
  if (errorcode >= 0x100)
    n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s (rrt: %s)", name,
                      rrt_strerror(errorcode >> kDetailShift));
  else
    n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", name);
  *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_create_errhandler);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* fn, MPI_Errhandler* errhandler) {
  if (fn == nullptr || errhandler == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *errhandler =
      kKindErrh | errhs().add(Errh{reinterpret_cast<MPI_Comm_errhandler_function*>(fn), 1});
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_create_errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler) {
  if (fn == nullptr || errhandler == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *errhandler = kKindErrh | errhs().add(Errh{fn, 1});
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Errhandler_free);
int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  if (errhandler == nullptr || errhs().get(handleIndex(*errhandler, kKindErrh)) == nullptr)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  errhandlerRelease(*errhandler);  // predefined ones never reach zero
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_set_errhandler);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (errhs().get(handleIndex(errhandler, kKindErrh)) == nullptr)
    return raise(comm, MPI_ERR_ARG, __func__);
  errhandlerRetain(errhandler);
  errhandlerRelease(c->errh);
  c->errh = errhandler;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_get_errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  errhandlerRetain(c->errh);  // the caller holds a reference (MPI_Errhandler_free releases it)
  *errhandler = c->errh;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_call_errhandler);
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  int err;
  if (!commCheck(comm, __func__, &err)) return err;
  raise(comm, errorcode, __func__);
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI environment: init/finalize over rrt_init/rrt_finalize, thread levels (rrt is
// serialized, so MPI_THREAD_SERIALIZED at most), clocks, names and versions, memory.
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
void commsInit();
void commsFinalize();

namespace {
bool gActive = false;
int gThreadLevel = MPI_THREAD_SINGLE;
pthread_t gMainThread;

int start(int* argc, char*** argv, const char* fn) {
  int flag = 0;
  rrt_initialized(&flag);
  if (flag) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, fn);  // MPI may be initialized once
  int rc = rrt_init(argc, argv);
  if (rc != RRT_SUCCESS) return fromRrt(rc);  // no communicator yet: nothing to apply
  typesInit();  // after rrt_init: the sizes of the predefined types come from rrt
  opsInit();
  commsInit();
  gActive = true;
  gMainThread = pthread_self();
  return MPI_SUCCESS;
}
}  // namespace

bool active() { return gActive; }

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Init);
int PMPI_Init(int* argc, char*** argv) { return start(argc, argv, __func__); }

RRT_MPI_WEAK_ALIAS(MPI_Init_thread);
int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int e = start(argc, argv, __func__);
  if (e) return e;
  gThreadLevel = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
  if (provided) *provided = gThreadLevel;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Query_thread);
int PMPI_Query_thread(int* provided) {
  *provided = gThreadLevel;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Is_thread_main);
int PMPI_Is_thread_main(int* flag) {
  *flag = pthread_equal(pthread_self(), gMainThread) != 0;
  return MPI_SUCCESS;
}

// Buffered sends and freed requests still in flight are completed first: MPI_Finalize must
// not lose them (MPI 3.1 section 8.7).
RRT_MPI_WEAK_ALIAS(MPI_Finalize);
int PMPI_Finalize(void) {
  if (!gActive) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, __func__);
  requestReap(true, false);
  commsFinalize();
  int rc = rrt_finalize();
  gActive = false;
  return rc == RRT_SUCCESS ? MPI_SUCCESS : fromRrt(rc);
}

RRT_MPI_WEAK_ALIAS(MPI_Initialized);
int PMPI_Initialized(int* flag) {
  return rrt_initialized(flag) == RRT_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}
RRT_MPI_WEAK_ALIAS(MPI_Finalized);
int PMPI_Finalized(int* flag) {
  return rrt_finalized(flag) == RRT_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

RRT_MPI_WEAK_ALIAS(MPI_Abort);
int PMPI_Abort(MPI_Comm comm, int errorcode) {
  Comm* c = commGet(comm);
  return fromRrt(rrt_abort(c ? c->rc : RRT_COMM_WORLD, errorcode));
}

RRT_MPI_WEAK_ALIAS(MPI_Wtime);
double PMPI_Wtime(void) { return rrt_wtime(); }
RRT_MPI_WEAK_ALIAS(MPI_Wtick);
double PMPI_Wtick(void) { return rrt_wtick(); }

RRT_MPI_WEAK_ALIAS(MPI_Get_processor_name);
int PMPI_Get_processor_name(char* name, int* resultlen) {
  if (name == nullptr || resultlen == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (int e = check(MPI_COMM_WORLD, rrt_get_processor_name(name, MPI_MAX_PROCESSOR_NAME), __func__))
    return e;
  *resultlen = static_cast<int>(strnlen(name, MPI_MAX_PROCESSOR_NAME));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_version);
int PMPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_library_version);
int PMPI_Get_library_version(char* version, int* resultlen) {
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                        "rrt %d.%d.%d MPI %d.%d subset (librrt_mpi)", RRT_VERSION_MAJOR,
                        RRT_VERSION_MINOR, RRT_VERSION_PATCH, MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}

// rrt_alloc_mem's memory: the node's peers can map it, so the shared-memory reductions read it
// where it lies (rrt.h). Size 0 gives a valid pointer, as before.
RRT_MPI_WEAK_ALIAS(MPI_Alloc_mem);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  if (size < 0 || baseptr == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (info != MPI_INFO_NULL && infoGet(info) == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  void* p = nullptr;
  if (rrt_alloc_mem(size > 0 ? static_cast<size_t>(size) : 1, &p) != RRT_SUCCESS || p == nullptr)
    return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Free_mem);
int PMPI_Free_mem(void* base) {
  if (rrt_free_mem(base) != RRT_SUCCESS) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_address);
int PMPI_Get_address(const void* location, MPI_Aint* address) {
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Aint_add);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
RRT_MPI_WEAK_ALIAS(MPI_Aint_diff);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

// Profiling control: meaningful only to a profiling library; MPI defines no effect otherwise.
RRT_MPI_WEAK_ALIAS(MPI_Pcontrol);
int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

}  // extern "C"

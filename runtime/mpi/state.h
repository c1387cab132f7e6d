// The MPI layer's own state: handle tables that translate MPI handles to rrt handles plus what
// MPI needs and rrt does not keep (error handlers with MPI's default, attributes, topologies,
// datatype layouts, requests that unpack or free a staging buffer when they complete).
//
// Contract: every MPI handle is an int whose high byte names its kind (see mpi.h); the low 24
// bits index a table here. Lookups return nullptr for a handle of the wrong kind or a freed
// slot, and the entry point reports the matching MPI_ERR_* through the communicator's error
// handler. Threading: MPI_THREAD_SERIALIZED, like rrt: no locks.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>
#include <rrt/rrt.h>

namespace rrt::mpi {

// ---- handle tables -------------------------------------------------------------------------
constexpr int kIndexMask = 0x00ffffff;
constexpr int kKindComm = 0x44000000, kKindGroup = 0x48000000, kKindType = 0x4c000000,
              kKindErrh = 0x54000000, kKindOp = 0x58000000, kKindInfo = 0x5c000000,
              kKindRequest = 0x6c000000, kKindKeyval = 0x64000000, kKindWin = 0x70000000,
              kKindMessage = 0x74000000;

// Slots keep their address for life (fixed-size chunks that never move), so pointers to entries
// stay valid; a lookup is two loads. Freed slots are reused, most recently freed first, so
// long-running programs do not grow the tables.
template <class T>
class Table {
 public:
  int add(T value) {
    const int idx = claim();
    slot(idx).value = std::move(value);
    return idx;
  }
  // A live slot holding T{} (a removed slot was reset), to be filled in place.
  int claim() {
    int idx;
    if (!free_.empty()) {
      idx = free_.back();
      free_.pop_back();
    } else {
      if ((size_ & (kChunk - 1)) == 0) chunks_.emplace_back(new Slot[kChunk]);
      idx = static_cast<int>(size_++);
    }
    slot(idx).live = true;
    return idx;
  }
  // The entry of a handle known to be live (just claimed).
  T& at(int idx) { return slot(idx).value; }
  T* get(int idx) {
    if (static_cast<unsigned>(idx) >= size_) return nullptr;  // also idx < 0
    Slot& s = slot(idx);
    return s.live ? &s.value : nullptr;
  }
  void remove(int idx) {
    Slot& s = slot(idx);
    s.live = false;
    s.value = T{};
    free_.push_back(idx);
  }
  size_t capacity() const { return size_; }

 private:
  static constexpr unsigned kChunk = 64;
  struct Slot {
    T value{};
    bool live = false;
  };
  Slot& slot(int idx) {
    const auto i = static_cast<unsigned>(idx);
    return chunks_[i / kChunk][i % kChunk];
  }
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  unsigned size_ = 0;
  std::vector<int> free_;
};

inline int handleIndex(int handle, int kind) {
  return (handle & ~kIndexMask) == kind ? (handle & kIndexMask) : -1;
}

// ---- errors (errhandler.cc) ----------------------------------------------------------------
// MPI code for an rrt code: the same class where one exists, else a code whose class is the
// nearest MPI class and whose string names the rrt cause.
int fromRrt(int rrtCode);
// Applies comm's error handler to code (MPI_SUCCESS passes through) and returns code.
// comm may be invalid: then MPI_COMM_WORLD's handler applies (MPI 3.1 section 8.3).
int raise(MPI_Comm comm, int code, const char* fn);
inline int check(MPI_Comm comm, int rrtCode, const char* fn) {
  return rrtCode == RRT_SUCCESS ? MPI_SUCCESS : raise(comm, fromRrt(rrtCode), fn);
}
void errhandlerRetain(MPI_Errhandler e);
bool errhandlerValid(MPI_Errhandler e);
// The user function of a handler made by MPI_*_create_errhandler (nullptr for predefined ones).
void* errhandlerFn(MPI_Errhandler e);
[[noreturn]] void fatal(int code, const char* fn, rrt_comm_t rc);
void errhandlerRelease(MPI_Errhandler e);

// ---- topologies ----------------------------------------------------------------------------
struct Topo {
  int kind = MPI_UNDEFINED;        // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED
  std::vector<int> dims, periods;  // cartesian
  std::vector<int> sources, sourceWeights, dests, destWeights;  // distributed graph
  std::vector<int> index, edges;  // graph (MPI_Graph_create's arrays)
  bool weighted = false;
};

// ---- communicators (comm.cc) ---------------------------------------------------------------
struct Comm {
  rrt_comm_t rc = RRT_COMM_NULL;
  int rank = 0, size = 0;
  MPI_Errhandler errh = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::vector<int> worldRanks;     // filled on first use (groups, compare); local group's
  // Intercommunicators: rc is rrt's intercommunicator (point-to-point to the remote group);
  // unionRc an intracommunicator over both groups, local group first when localFirst (merge, dup).
  bool inter = false, localFirst = true;
  rrt_comm_t unionRc = RRT_COMM_NULL;
  std::vector<int> remoteWorldRanks;
  Topo topo;
  std::map<int, void*> attrs;      // user keyval -> value
  std::vector<int> attrOrder;      // the keyvals of attrs in the order they were set
  std::map<std::string, std::string> hints;  // MPI_Comm_set_info
};
// The tables live in comm.cc, datatype.cc and request.cc; the lookups are inline because every
// call of the point-to-point fast path makes two or three of them.
extern Table<Comm> gComms;
inline Comm* commGet(MPI_Comm handle) { return gComms.get(handleIndex(handle, kKindComm)); }
// nullptr plus the error raised on MPI_COMM_WORLD (MPI_ERR_COMM) for an invalid handle.
Comm* commCheck(MPI_Comm handle, const char* fn, int* err);
// Wraps a new rrt communicator (RRT_COMM_NULL gives MPI_COMM_NULL). Inherits errh from parent.
int commWrap(rrt_comm_t rc, const Comm& parent, MPI_Comm* out);
const std::vector<int>& commWorldRanks(Comm& c);

// ---- attributes (attr.cc) ------------------------------------------------------------------
// Runs the keyvals' copy callbacks from old into fresh (comm_dup). MPI error code.
int attrCopyAll(MPI_Comm oldHandle, Comm& old, Comm& fresh);
// Runs the delete callbacks (comm_free). MPI error code.
int attrDeleteAll(MPI_Comm handle, Comm& c);

// ---- groups (group.cc) ---------------------------------------------------------------------
// A group is its members' world ranks, in group order.
int groupMake(std::vector<int> worldRanks, MPI_Group* out);
const std::vector<int>* groupGet(MPI_Group handle);

// ---- datatypes (datatype.cc, typemap.cc) ---------------------------------------------------
// One element's layout, flattened: runs of a predefined rrt type at byte displacements (for
// MPI_Get_elements and reductions) and the same merged into byte blocks (for packing).
struct Run {
  long disp;
  rrt_datatype_t type;  // predefined rrt type
  size_t n;             // elements
  size_t typeSize;
};
struct Block {
  long disp;
  size_t len;
};
struct Type {
  bool predefined = false, committed = false;
  rrt_datatype_t rrtType = RRT_DATATYPE_NULL;  // predefined: its rrt type
  rrt_datatype_t base = RRT_DATATYPE_NULL;     // the one rrt type of every run, else NULL
  size_t size = 0;      // bytes of data in one element, as rrt moves them
  // Bytes of the type signature (MPI_Type_size): size less the padding that rrt's (value, index)
  // pair types carry inside (MPI_DOUBLE_INT: size 16, sigSize 12, as MPI 3.1 section 4.1.5 and
  // Open MPI and MPICH count it).
  size_t sigSize = 0;
  size_t nBasic = 0;    // predefined elements in one element
  size_t align = 1;     // strictest alignment of a predefined type inside
  long lb = 0, extent = 0, trueLb = 0, trueUb = 0;
  std::vector<Run> runs;
  std::vector<Block> blocks;
  rrt_datatype_t opType = RRT_DATATYPE_NULL;  // user-op reductions: extent bytes (lazily made)
  std::string name;
  // MPI_Type_get_envelope: the constructor and its argument counts.
  int combiner = MPI_COMBINER_NAMED, nInts = 0, nAddrs = 0, nTypes = 0;
  // Persistent requests keep the type they were made with: MPI_Type_free only marks it then,
  // and the last typeRelease frees it (MPI 3.1 section 4.1.9).
  int refs = 0;
  bool freed = false;
};
extern Table<Type> gTypes;
inline Type* typeGet(MPI_Datatype handle) { return gTypes.get(handleIndex(handle, kKindType)); }
void typeRetain(MPI_Datatype handle);
void typeRelease(MPI_Datatype handle);
// An element's data lies in one byte range of size bytes at displacement blocks[0].disp,
// and count elements lie back to back.
inline bool typeDense(const Type& t) {
  return t.size == 0 ||
         (t.blocks.size() == 1 && static_cast<long>(t.size) == t.extent);
}
inline long typeDataOffset(const Type& t) { return t.blocks.empty() ? 0 : t.blocks[0].disp; }
void typePack(const Type& t, const void* in, size_t count, char* out);
// Unpacks up to bytes bytes (whole or partial elements) into out.
void typeUnpack(const Type& t, const char* in, size_t bytes, void* out, size_t count);
size_t typeElements(const Type& t, size_t bytes);  // predefined elements in bytes of data
// The rrt type that carries one element of t through a user-op reduction (extent bytes), and
// the MPI type it stands for when rrt hands it back to the bridge.
int typeOpType(MPI_Datatype handle, Type& t, rrt_datatype_t* out);
MPI_Datatype typeFromOpType(rrt_datatype_t rrtType);
void typesInit();

// ---- buffers as rrt sees them (stage.cc) ---------------------------------------------------
// Staging of one operation: temporary contiguous copies for non-dense datatypes and what to do
// when the operation completes (unpack, free). Blocking calls run finish() at once;
// non-blocking ones keep it in the request.
struct Stage {
  struct Parts {
    std::vector<std::unique_ptr<char[]>> temps;
    std::vector<std::function<void(size_t)>> after;  // called with the bytes received
  };
  // Allocated on first use: most operations (predefined or dense datatypes) stage nothing, and
  // then a Stage is one null pointer to move and destroy on the point-to-point fast path.
  std::unique_ptr<Parts> p;

  Parts& parts() {
    if (!p) p.reset(new Parts);
    return *p;
  }
  char* temp(size_t bytes) {
    auto& t = parts().temps;
    t.emplace_back(new char[bytes ? bytes : 1]);
    return t.back().get();
  }
  void onFinish(std::function<void(size_t)> f) { parts().after.push_back(std::move(f)); }
  void finish(size_t bytes = static_cast<size_t>(-1)) {
    if (!p) return;
    for (auto& f : p->after) f(bytes);
    p.reset();
  }
  bool empty() const { return !p; }
};
struct RrtBuf {
  void* ptr = nullptr;
  size_t count = 0;
  rrt_datatype_t type = RRT_BYTE;
};
// Data to read: count elements of t at buf. Packs into st when t is not dense. typed: as
// elements of t's one predefined base type (reductions; the caller checked t.base), else bytes
// (predefined types always go as themselves).
RrtBuf stageIn(Stage& st, const Type& t, const void* buf, size_t count, bool typed = false);
// Data to write (and, when inout, to read first): unpacks from the temp in st.after.
RrtBuf stageOut(Stage& st, const Type& t, void* buf, size_t count, bool inout, bool typed = false);

// ---- requests (request.cc) -----------------------------------------------------------------
enum class ReqKind : unsigned char { Plain, PersistentSend, PersistentRecv };
struct Request {
  rrt_request_t rr = RRT_REQUEST_NULL;  // NULL: inactive (persistent) or already complete
  ReqKind kind = ReqKind::Plain;
  MPI_Comm comm = MPI_COMM_NULL;        // for the error handler
  bool p2p = false;                      // a send or receive: MPI_Cancel hands it to rrt_cancel
  Stage stage;
  // persistent: the saved arguments
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int peer = 0, tag = 0;
  int mode = 0;                          // 0 standard, 1 synchronous, 2 ready
  bool started = false;
  // MPI_Request_get_status saw completion: the outcome waits here for MPI_Wait / MPI_Test.
  bool done = false;
  int doneRc = RRT_SUCCESS;
  rrt_status_t doneStatus{};
};
// New request for an rrt request and its staging (moved in). Returns the MPI handle.
MPI_Request requestMake(rrt_request_t rr, MPI_Comm comm, Stage&& st, bool p2p);
extern Table<Request> gRequests;
inline Request* requestGet(MPI_Request handle) {
  return gRequests.get(handleIndex(handle, kKindRequest));
}
// Keeps an rrt request that nobody waits for (MPI_Request_free, MPI_Bsend) with its staging
// until it completes; reaped from every completion call and drained by MPI_Finalize.
void requestDetach(rrt_request_t rr, Stage&& st, size_t bsendBytes);
void requestReap(bool waitAll, bool bsendOnly);
size_t bsendBytesInFlight();

// ---- point-to-point posting (p2p.cc), shared with persistent requests -----------------------
// mode: 0 standard, 1 synchronous, 2 ready.
int postSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             int mode, rrt_request_t* rr, Stage* st, const char* fn);
int postRecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             rrt_request_t* rr, Stage* st, const char* fn);

// ---- statuses --------------------------------------------------------------------------------
// Fills an MPI status from rrt's (MPI_ERROR only when setError: single-completion calls leave
// it alone, MPI 3.1 section 3.2.5).
inline void statusFromRrt(const rrt_status_t& s, MPI_Status* out, bool setError) {
  if (out == MPI_STATUS_IGNORE) return;
  out->MPI_SOURCE = s.source;
  out->MPI_TAG = s.tag;
  if (setError) out->MPI_ERROR = s.error == RRT_SUCCESS ? MPI_SUCCESS : fromRrt(s.error);
  out->rrt_cancelled_ = s.cancelled;
  out->rrt_bytes_ = s.bytes;
}
inline void statusEmpty(MPI_Status* out, bool setError) {
  if (out == MPI_STATUS_IGNORE) return;
  out->MPI_SOURCE = MPI_ANY_SOURCE;
  out->MPI_TAG = MPI_ANY_TAG;
  if (setError) out->MPI_ERROR = MPI_SUCCESS;
  out->rrt_cancelled_ = 0;
  out->rrt_bytes_ = 0;
}

// ---- ops (op.cc) ---------------------------------------------------------------------------
struct Op {
  rrt_op_t rop = RRT_OP_NULL;
  MPI_User_function* fn = nullptr;  // user ops
  bool commute = true;
};
Op* opGet(MPI_Op handle);
void opsInit();

// ---- info (info.cc) ------------------------------------------------------------------------
std::map<std::string, std::string>* infoGet(MPI_Info handle);
int infoMake(std::map<std::string, std::string> kv, MPI_Info* out);

// ---- environment (init.cc) -----------------------------------------------------------------
bool active();  // between MPI_Init and MPI_Finalize

}  // namespace rrt::mpi

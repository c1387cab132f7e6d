// One-sided communication: MPI windows over rrt windows (rrt_win_*).
//
// Translation only: the rrt window is created with disp_unit 1 and this layer scales each
// target displacement by the target's disp_unit (gathered at creation), so that a derived
// target datatype can be cut into its contiguous blocks, one rrt operation per block, at byte
// displacements. Origin buffers of non-dense datatypes are packed (put, accumulate) or received
// into a temporary and unpacked (get, get_accumulate) once the operation is complete: such
// operations are kept with their staging until the next synchronization call on the window
// completes them (or, for request-based ones, in the MPI request).
#include <atomic>
#include <climits>
#include <cstring>
#include <memory>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

struct Pending {
  rrt_request_t rr;
  int target;
  std::shared_ptr<Stage> stage;
};

struct Win {
  rrt_win_t rw = RRT_WIN_NULL;
  int rank = 0, size = 0;
  std::vector<int> units;       // every rank's disp_unit
  std::vector<int> worldRanks;  // the group, in window rank order
  // What MPI_Win_get_attr points to.
  void* base = nullptr;
  MPI_Aint winSize = 0;
  int dispUnit = 1;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  MPI_Errhandler errh = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::vector<Pending> pending;  // staged operations awaiting a synchronization
};

Table<Win>& wins() {
  static Table<Win> t;
  return t;
}

Win* winGet(MPI_Win handle) { return wins().get(handleIndex(handle, kKindWin)); }

// Applies the window's error handler (MPI 3.1 section 8.3.2) and returns code.
int raiseWin(MPI_Win handle, Win* w, int code, const char* fn) {
  if (code == MPI_SUCCESS) return code;
  if (!w) return raise(MPI_COMM_WORLD, code, fn);
  if (w->errh == MPI_ERRORS_RETURN) return code;
  if (w->errh == MPI_ERRORS_ARE_FATAL) fatal(code, fn, RRT_COMM_WORLD);
  if (auto* f = reinterpret_cast<MPI_Win_errhandler_function*>(errhandlerFn(w->errh))) {
    MPI_Win h = handle;
    int c = code;
    f(&h, &c);
  }
  return code;
}

int checkWin(MPI_Win handle, Win* w, int rrtCode, const char* fn) {
  return rrtCode == RRT_SUCCESS ? MPI_SUCCESS : raiseWin(handle, w, fromRrt(rrtCode), fn);
}

#define GET_WIN(var, handle)                                                  \
  Win* var = winGet(handle);                                                  \
  if (var == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_WIN, __func__)

// Completes staged operations (to target, or all when target < 0) after an rrt sync call.
int drain(Win& w, int target) {
  int rc = RRT_SUCCESS;
  for (size_t i = 0; i < w.pending.size();) {
    Pending& p = w.pending[i];
    if (target >= 0 && p.target != target) {
      ++i;
      continue;
    }
    rrt_status_t s{};
    int e = rrt_wait(&p.rr, &s);
    if (e != RRT_SUCCESS && rc == RRT_SUCCESS) rc = e;
    if (p.stage.use_count() == 1) p.stage->finish(s.bytes);
    w.pending.erase(w.pending.begin() + static_cast<long>(i));
  }
  return rc;
}

int createCommon(MPI_Comm comm, int dispUnit, int flavor, void* base, MPI_Aint size,
                 MPI_Win* win, const char* fn) {
  int err;
  Comm* c = commCheck(comm, fn, &err);
  if (!c) return err;
  if (!win) return raise(comm, MPI_ERR_ARG, fn);
  if (c->inter) return raise(comm, MPI_ERR_COMM, fn);
  if (size < 0) return raise(comm, MPI_ERR_SIZE, fn);
  if (dispUnit <= 0) return raise(comm, MPI_ERR_DISP, fn);
  Win w;
  w.rank = c->rank;
  w.size = c->size;
  w.dispUnit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : dispUnit;
  w.flavor = flavor;
  w.winSize = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
  int rc;
  if (flavor == MPI_WIN_FLAVOR_CREATE) {
    rc = rrt_win_create(size ? base : nullptr, static_cast<size_t>(size), 1, c->rc, &w.rw);
    w.base = base;
  } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
    rc = rrt_win_allocate(static_cast<size_t>(size), 1, c->rc, &w.base, &w.rw);
    if (rc == RRT_SUCCESS) *static_cast<void**>(base) = w.base;
  } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
    rc = rrt_win_allocate_shared(static_cast<size_t>(size), 1, c->rc, &w.base, &w.rw);
    if (rc == RRT_SUCCESS) *static_cast<void**>(base) = w.base;
  } else {
    rc = rrt_win_create_dynamic(c->rc, &w.rw);
    w.base = MPI_BOTTOM;
  }
  if (rc != RRT_SUCCESS) return check(comm, rc, fn);
  w.units.assign(static_cast<size_t>(c->size), 1);
  rc = rrt_allgather(&w.dispUnit, 1, RRT_INT32, w.units.data(), 1, RRT_INT32, c->rc);
  if (rc != RRT_SUCCESS) {
    rrt_win_free(&w.rw);
    return check(comm, rc, fn);
  }
  w.worldRanks = commWorldRanks(*c);
  w.errh = MPI_ERRORS_ARE_FATAL;
  *win = kKindWin | wins().add(std::move(w));
  return MPI_SUCCESS;
}

enum class Kind { Put, Get, Acc, GetAcc };

// One contiguous piece of target memory: byte offset from the target displacement, length.
struct Piece {
  long off;
  size_t len;
};

int rma(const char* fn, Kind kind, const void* origin, int ocount, MPI_Datatype otype,
        void* result, int rcount, MPI_Datatype rtype, int target, MPI_Aint tdisp, int tcount,
        MPI_Datatype ttype, MPI_Op op, MPI_Win handle, MPI_Request* request) {
  GET_WIN(w, handle);
  if (request) *request = MPI_REQUEST_NULL;
  const bool sends = kind == Kind::Put || kind == Kind::Acc ||
                     (kind == Kind::GetAcc && op != MPI_NO_OP);
  Type* tt = typeGet(ttype);
  Type* ot = sends || kind == Kind::Get ? typeGet(otype) : nullptr;
  Type* rt = kind == Kind::GetAcc ? typeGet(rtype) : nullptr;
  if (!tt || !tt->committed || ((sends || kind == Kind::Get) && (!ot || !ot->committed)) ||
      (kind == Kind::GetAcc && (!rt || !rt->committed)))
    return raiseWin(handle, w, MPI_ERR_TYPE, fn);
  if (tcount < 0 || (ot && ocount < 0) || (rt && rcount < 0))
    return raiseWin(handle, w, MPI_ERR_COUNT, fn);
  if (target == MPI_PROC_NULL) {
    if (request) {
      *request = requestMake(RRT_REQUEST_NULL, MPI_COMM_WORLD, Stage{}, false);
      Request* r = requestGet(*request);
      r->done = true;
      r->doneStatus = rrt_status_t{MPI_PROC_NULL, MPI_ANY_TAG, RRT_SUCCESS, 0, 0};
    }
    return MPI_SUCCESS;
  }
  if (target < 0 || target >= w->size) return raiseWin(handle, w, MPI_ERR_RANK, fn);
  const size_t bytes = tt->size * static_cast<size_t>(tcount);
  if ((ot && ot->size * static_cast<size_t>(ocount) != bytes) ||
      (rt && rt->size * static_cast<size_t>(rcount) != bytes))
    return raiseWin(handle, w, MPI_ERR_TYPE, fn);  // the type signatures do not match
  rrt_op_t rop = RRT_OP_NULL;
  rrt_datatype_t base = RRT_BYTE;
  size_t baseSize = 1;
  if (kind == Kind::Acc || kind == Kind::GetAcc) {
    Op* o = opGet(op);
    if (!o || o->fn) return raiseWin(handle, w, MPI_ERR_OP, fn);  // predefined ops only
    rop = o->rop;
    base = tt->base;
    if (bytes == 0) base = RRT_BYTE;  // nothing moves: any types will do
    if (base == RRT_DATATYPE_NULL || (bytes && ot && ot->size && ot->base != base) ||
        (bytes && rt && rt->size && rt->base != base))
      return raiseWin(handle, w, MPI_ERR_TYPE, fn);
    rrt_type_size(base, &baseSize);
  }
  // Target pieces in bytes from the displacement. A dense target (the common case) is one
  // piece held here: the small-operation path allocates nothing on the heap.
  Piece one{0, 0};
  std::vector<Piece> many;
  const Piece* pieces = &one;
  size_t npieces = 0;
  if (typeDense(*tt)) {
    if (bytes) {
      one = Piece{typeDataOffset(*tt), bytes};
      npieces = 1;
    }
  } else {
    for (int i = 0; i < tcount; ++i)
      for (const Block& b : tt->blocks) {
        long off = static_cast<long>(i) * tt->extent + b.disp;
        if (!many.empty() && many.back().off + static_cast<long>(many.back().len) == off)
          many.back().len += b.len;
        else
          many.push_back(Piece{off, b.len});
      }
    pieces = many.data();
    npieces = many.size();
  }
  // Staging of non-dense origin buffers (nothing, and no allocation, for dense ones).
  Stage stage;
  Stage* st = &stage;
  char* src = nullptr;
  char* dst = nullptr;
  if (sends) src = static_cast<char*>(stageIn(*st, *ot, origin, static_cast<size_t>(ocount)).ptr);
  if (kind == Kind::Get)
    dst = static_cast<char*>(stageOut(*st, *ot, result, static_cast<size_t>(ocount), false).ptr);
  if (kind == Kind::GetAcc)
    dst = static_cast<char*>(stageOut(*st, *rt, result, static_cast<size_t>(rcount), false).ptr);
  const bool staged = !st->empty();
  const size_t unit = static_cast<size_t>(w->units[static_cast<size_t>(target)]);
  const size_t disp0 = static_cast<size_t>(tdisp) * unit;
  // One rrt operation per piece; a request for each when it must be tracked.
  const bool track = staged || request;
  std::vector<rrt_request_t> rrs;
  size_t done = 0;
  int rc = RRT_SUCCESS;
  for (size_t pi = 0; pi < npieces; ++pi) {
    const Piece& p = pieces[pi];
    const size_t disp = disp0 + static_cast<size_t>(p.off);
    char* s = src ? src + done : nullptr;
    char* d = dst ? dst + done : nullptr;
    const size_t n = p.len / baseSize;
    rrt_request_t rr = RRT_REQUEST_NULL;
    switch (kind) {
      case Kind::Put:
        rc = track ? rrt_win_rput(s, p.len, RRT_BYTE, target, disp, w->rw, &rr)
                   : rrt_win_put(s, p.len, RRT_BYTE, target, disp, w->rw);
        break;
      case Kind::Get:
        rc = track ? rrt_win_rget(d, p.len, RRT_BYTE, target, disp, w->rw, &rr)
                   : rrt_win_get(d, p.len, RRT_BYTE, target, disp, w->rw);
        break;
      case Kind::Acc:
        rc = track ? rrt_win_raccumulate(s, n, base, target, disp, rop, w->rw, &rr)
                   : rrt_win_accumulate(s, n, base, target, disp, rop, w->rw);
        break;
      case Kind::GetAcc:
        rc = track ? rrt_win_rget_accumulate(s, d, n, base, target, disp, rop, w->rw, &rr)
                   : rrt_win_get_accumulate(s, d, n, base, target, disp, rop, w->rw);
        break;
    }
    if (rc != RRT_SUCCESS) break;
    if (rr != RRT_REQUEST_NULL) rrs.push_back(rr);
    done += p.len;
  }
  // Unpack everything that arrived, whatever one piece's status says.
  if (st->p)
    for (auto& f : st->p->after)
      f = [g = std::move(f), total = done](size_t) { g(total); };
  if (request) {
    // The MPI request stands for the last piece; the others are waited for here (request-based
    // operations belong to passive-target epochs, where the target progresses).
    rrt_request_t last = RRT_REQUEST_NULL;
    if (!rrs.empty()) {
      last = rrs.back();
      rrs.pop_back();
    }
    for (rrt_request_t& r : rrs) {
      int e = rrt_wait(&r, RRT_STATUS_IGNORE);
      if (e != RRT_SUCCESS && rc == RRT_SUCCESS) rc = e;
    }
    if (rc != RRT_SUCCESS) {
      if (last != RRT_REQUEST_NULL) (void)rrt_wait(&last, RRT_STATUS_IGNORE);
      return checkWin(handle, w, rc, fn);
    }
    Stage moved = std::move(*st);
    *request = requestMake(last, MPI_COMM_WORLD, std::move(moved), false);
    if (last == RRT_REQUEST_NULL) {  // nothing to move: complete at once
      Request* r = requestGet(*request);
      r->stage.finish(0);
      r->done = true;
      r->doneStatus = rrt_status_t{target, MPI_ANY_TAG, RRT_SUCCESS, 0, 0};
    }
    return MPI_SUCCESS;
  }
  if (!rrs.empty()) {
    // Kept until a synchronization call completes them; the staging goes with the last one.
    auto shared = std::make_shared<Stage>(std::move(stage));
    for (rrt_request_t r : rrs) w->pending.push_back(Pending{r, target, shared});
  } else if (staged) {
    st->finish(0);
  }
  return checkWin(handle, w, rc, fn);
}

// Sync wrappers: the rrt call, then the staged operations it completed.
int syncDone(MPI_Win handle, Win* w, int rc, int target, const char* fn) {
  int d = drain(*w, target);
  return checkWin(handle, w, rc != RRT_SUCCESS ? rc : d, fn);
}

// Window ranks of an MPI group (world ranks); false when a member is not in the window.
bool groupRanks(const Win& w, MPI_Group group, std::vector<int>* out) {
  const std::vector<int>* g = groupGet(group);
  if (!g) return false;
  out->clear();
  for (int wr : *g) {
    int r = -1;
    for (size_t i = 0; i < w.worldRanks.size(); ++i)
      if (w.worldRanks[i] == wr) r = static_cast<int>(i);
    if (r < 0) return false;
    out->push_back(r);
  }
  return true;
}

int rrtAssert(int a) { return (a & MPI_MODE_NOCHECK) ? RRT_MODE_NOCHECK : 0; }

}  // namespace
}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Win_create);
int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm,
                    MPI_Win* win) {
  return createCommon(comm, disp_unit, MPI_WIN_FLAVOR_CREATE, base, size, win, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_allocate);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr,
                      MPI_Win* win) {
  if (!baseptr) return raise(comm, MPI_ERR_ARG, __func__);
  return createCommon(comm, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, baseptr, size, win, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_allocate_shared);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
  if (!baseptr) return raise(comm, MPI_ERR_ARG, __func__);
  return createCommon(comm, disp_unit, MPI_WIN_FLAVOR_SHARED, baseptr, size, win, __func__);
}

// rrt's windows have disp_unit 1 (this layer scales displacements itself): the unit returned is
// the MPI one of the rank whose part it is.
RRT_MPI_WEAK_ALIAS(MPI_Win_shared_query);
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  GET_WIN(w, win);
  if (!size || !disp_unit || !baseptr) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  if (w->flavor != MPI_WIN_FLAVOR_SHARED) return raiseWin(win, w, MPI_ERR_RMA_FLAVOR, __func__);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
    return raiseWin(win, w, MPI_ERR_RANK, __func__);
  size_t bytes = 0;
  int unit = 1, found = 0;
  int rc = RRT_SUCCESS;
  if (rank != MPI_PROC_NULL) {
    rc = rrt_win_shared_query(w->rw, rank, &bytes, &unit, baseptr);
  } else {  // the first non-empty part; rank 0's when all are empty
    for (rank = w->size - 1; rank >= 0 && rc == RRT_SUCCESS; --rank) {
      size_t qb = 0;
      void* qp = nullptr;
      rc = rrt_win_shared_query(w->rw, rank, &qb, &unit, &qp);
      if (qb > 0 || (rank == 0 && bytes == 0)) {  // walking down: the last hit is the first
        bytes = qb;
        *static_cast<void**>(baseptr) = qp;
        found = rank;
      }
    }
    rank = found;
  }
  if (rc != RRT_SUCCESS) return checkWin(win, w, rc, __func__);
  *size = static_cast<MPI_Aint>(bytes);
  *disp_unit = w->units[static_cast<size_t>(rank)];
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_create_dynamic);
int PMPI_Win_create_dynamic(MPI_Info, MPI_Comm comm, MPI_Win* win) {
  return createCommon(comm, 1, MPI_WIN_FLAVOR_DYNAMIC, nullptr, 0, win, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_attach);
int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  GET_WIN(w, win);
  if (size < 0) return raiseWin(win, w, MPI_ERR_SIZE, __func__);
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return raiseWin(win, w, MPI_ERR_RMA_FLAVOR, __func__);
  return checkWin(win, w, rrt_win_attach(w->rw, base, static_cast<size_t>(size)), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_detach);
int PMPI_Win_detach(MPI_Win win, const void* base) {
  GET_WIN(w, win);
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return raiseWin(win, w, MPI_ERR_RMA_FLAVOR, __func__);
  return checkWin(win, w, rrt_win_detach(w->rw, base), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_free);
int PMPI_Win_free(MPI_Win* win) {
  if (!win) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  GET_WIN(w, *win);
  int d = drain(*w, -1);
  int rc = rrt_win_free(&w->rw);
  if (rc == RRT_ERR_RMA_SYNC) return checkWin(*win, w, rc, __func__);  // still in an epoch
  errhandlerRelease(w->errh);
  MPI_Win h = *win;
  Win copy = std::move(*w);
  wins().remove(handleIndex(h, kKindWin));
  *win = MPI_WIN_NULL;
  return checkWin(h, &copy, rc != RRT_SUCCESS ? rc : d, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_get_group);
int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  GET_WIN(w, win);
  if (!group) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  return groupMake(w->worldRanks, group);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_get_attr);
int PMPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  GET_WIN(w, win);
  if (!attribute_val || !flag) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  *flag = 1;
  switch (keyval) {
    case MPI_WIN_BASE: *static_cast<void**>(attribute_val) = w->base; break;
    case MPI_WIN_SIZE: *static_cast<MPI_Aint**>(attribute_val) = &w->winSize; break;
    case MPI_WIN_DISP_UNIT: *static_cast<int**>(attribute_val) = &w->dispUnit; break;
    case MPI_WIN_CREATE_FLAVOR: *static_cast<int**>(attribute_val) = &w->flavor; break;
    case MPI_WIN_MODEL: *static_cast<int**>(attribute_val) = &w->model; break;
    default: *flag = 0; return raiseWin(win, w, MPI_ERR_KEYVAL, __func__);
  }
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_set_name);
int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  GET_WIN(w, win);
  if (!win_name) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_get_name);
int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  GET_WIN(w, win);
  if (!win_name || !resultlen) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}

// rrt takes no window hints; MPI lets an implementation ignore every one (MPI 3.1 11.2.7).
RRT_MPI_WEAK_ALIAS(MPI_Win_set_info);
int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  GET_WIN(w, win);
  if (info != MPI_INFO_NULL && !infoGet(info)) return raiseWin(win, w, MPI_ERR_INFO, __func__);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_get_info);
int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  GET_WIN(w, win);
  if (!info_used) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  return infoMake({}, info_used);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_set_errhandler);
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  GET_WIN(w, win);
  if (!errhandlerValid(errhandler)) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  errhandlerRetain(errhandler);
  errhandlerRelease(w->errh);
  w->errh = errhandler;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_get_errhandler);
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  GET_WIN(w, win);
  if (!errhandler) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  errhandlerRetain(w->errh);
  *errhandler = w->errh;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_call_errhandler);
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  GET_WIN(w, win);
  raiseWin(win, w, errorcode, __func__);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Put);
int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win) {
  return rma(__func__, Kind::Put, origin_addr, origin_count, origin_datatype, nullptr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
             MPI_OP_NULL, win, nullptr);
}

RRT_MPI_WEAK_ALIAS(MPI_Get);
int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return rma(__func__, Kind::Get, nullptr, origin_count, origin_datatype, origin_addr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
             MPI_OP_NULL, win, nullptr);
}

RRT_MPI_WEAK_ALIAS(MPI_Accumulate);
int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (op == MPI_NO_OP) {
    Win* w = winGet(win);
    return raiseWin(win, w, MPI_ERR_OP, __func__);
  }
  return rma(__func__, Kind::Acc, origin_addr, origin_count, origin_datatype, nullptr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op,
             win, nullptr);
}

RRT_MPI_WEAK_ALIAS(MPI_Get_accumulate);
int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return rma(__func__, Kind::GetAcc, origin_addr, origin_count, origin_datatype, result_addr,
             result_count, result_datatype, target_rank, target_disp, target_count,
             target_datatype, op, win, nullptr);
}

RRT_MPI_WEAK_ALIAS(MPI_Fetch_and_op);
int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  Type* t = typeGet(datatype);
  if (!t || !t->predefined) return raiseWin(win, winGet(win), MPI_ERR_TYPE, __func__);
  return rma(__func__, Kind::GetAcc, origin_addr, 1, datatype, result_addr, 1, datatype,
             target_rank, target_disp, 1, datatype, op, win, nullptr);
}

RRT_MPI_WEAK_ALIAS(MPI_Compare_and_swap);
int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
  GET_WIN(w, win);
  Type* t = typeGet(datatype);
  if (!t || !t->predefined) return raiseWin(win, w, MPI_ERR_TYPE, __func__);
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target_rank < 0 || target_rank >= w->size) return raiseWin(win, w, MPI_ERR_RANK, __func__);
  const size_t disp = static_cast<size_t>(target_disp) *
                      static_cast<size_t>(w->units[static_cast<size_t>(target_rank)]);
  return checkWin(win, w,
                  rrt_win_compare_and_swap(origin_addr, compare_addr, result_addr, t->rrtType,
                                           target_rank, disp, w->rw),
                  __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Rput);
int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  if (!request) return raiseWin(win, winGet(win), MPI_ERR_ARG, __func__);
  return rma(__func__, Kind::Put, origin_addr, origin_count, origin_datatype, nullptr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
             MPI_OP_NULL, win, request);
}

RRT_MPI_WEAK_ALIAS(MPI_Rget);
int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  if (!request) return raiseWin(win, winGet(win), MPI_ERR_ARG, __func__);
  return rma(__func__, Kind::Get, nullptr, origin_count, origin_datatype, origin_addr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
             MPI_OP_NULL, win, request);
}

RRT_MPI_WEAK_ALIAS(MPI_Raccumulate);
int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  if (!request || op == MPI_NO_OP)
    return raiseWin(win, winGet(win), request ? MPI_ERR_OP : MPI_ERR_ARG, __func__);
  return rma(__func__, Kind::Acc, origin_addr, origin_count, origin_datatype, nullptr, 0,
             MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op,
             win, request);
}

RRT_MPI_WEAK_ALIAS(MPI_Rget_accumulate);
int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void* result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
  if (!request) return raiseWin(win, winGet(win), MPI_ERR_ARG, __func__);
  return rma(__func__, Kind::GetAcc, origin_addr, origin_count, origin_datatype, result_addr,
             result_count, result_datatype, target_rank, target_disp, target_count,
             target_datatype, op, win, request);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_fence);
int PMPI_Win_fence(int assert, MPI_Win win) {
  GET_WIN(w, win);
  return syncDone(win, w, rrt_win_fence(assert, w->rw), -1, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_lock);
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  GET_WIN(w, win);
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return raiseWin(win, w, MPI_ERR_LOCKTYPE, __func__);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
    return raiseWin(win, w, MPI_ERR_RANK, __func__);
  return checkWin(win, w, rrt_win_lock(lock_type, rank, rrtAssert(assert), w->rw), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_unlock);
int PMPI_Win_unlock(int rank, MPI_Win win) {
  GET_WIN(w, win);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
    return raiseWin(win, w, MPI_ERR_RANK, __func__);
  return syncDone(win, w, rrt_win_unlock(rank, w->rw), rank, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_lock_all);
int PMPI_Win_lock_all(int assert, MPI_Win win) {
  GET_WIN(w, win);
  return checkWin(win, w, rrt_win_lock_all(rrtAssert(assert), w->rw), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_unlock_all);
int PMPI_Win_unlock_all(MPI_Win win) {
  GET_WIN(w, win);
  return syncDone(win, w, rrt_win_unlock_all(w->rw), -1, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_flush);
int PMPI_Win_flush(int rank, MPI_Win win) {
  GET_WIN(w, win);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
    return raiseWin(win, w, MPI_ERR_RANK, __func__);
  return syncDone(win, w, rrt_win_flush(rank, w->rw), rank, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_flush_all);
int PMPI_Win_flush_all(MPI_Win win) {
  GET_WIN(w, win);
  return syncDone(win, w, rrt_win_flush(-1, w->rw), -1, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_flush_local);
int PMPI_Win_flush_local(int rank, MPI_Win win) {
  GET_WIN(w, win);
  if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
    return raiseWin(win, w, MPI_ERR_RANK, __func__);
  return syncDone(win, w, rrt_win_flush_local(rank, w->rw), rank, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_flush_local_all);
int PMPI_Win_flush_local_all(MPI_Win win) {
  GET_WIN(w, win);
  return syncDone(win, w, rrt_win_flush_local(-1, w->rw), -1, __func__);
}

// The unified model: window memory is the process's memory; a full fence orders this process's
// loads and stores against the one-sided accesses rrt performs on its behalf.
RRT_MPI_WEAK_ALIAS(MPI_Win_sync);
int PMPI_Win_sync(MPI_Win win) {
  GET_WIN(w, win);
  (void)w;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Win_post);
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  GET_WIN(w, win);
  std::vector<int> ranks;
  if (!groupRanks(*w, group, &ranks)) return raiseWin(win, w, MPI_ERR_GROUP, __func__);
  return checkWin(win, w,
                  rrt_win_post(static_cast<int>(ranks.size()), ranks.data(), rrtAssert(assert),
                               w->rw),
                  __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_start);
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  GET_WIN(w, win);
  std::vector<int> ranks;
  if (!groupRanks(*w, group, &ranks)) return raiseWin(win, w, MPI_ERR_GROUP, __func__);
  return checkWin(win, w,
                  rrt_win_start(static_cast<int>(ranks.size()), ranks.data(), rrtAssert(assert),
                                w->rw),
                  __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_complete);
int PMPI_Win_complete(MPI_Win win) {
  GET_WIN(w, win);
  return syncDone(win, w, rrt_win_complete(w->rw), -1, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_wait);
int PMPI_Win_wait(MPI_Win win) {
  GET_WIN(w, win);
  return checkWin(win, w, rrt_win_wait(w->rw), __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Win_test);
int PMPI_Win_test(MPI_Win win, int* flag) {
  GET_WIN(w, win);
  if (!flag) return raiseWin(win, w, MPI_ERR_ARG, __func__);
  return checkWin(win, w, rrt_win_test(w->rw, flag), __func__);
}

}  // extern "C"

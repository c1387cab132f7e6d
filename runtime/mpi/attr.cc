// Communicator attributes: the predefined keys (MPI_TAG_UB and friends, which benchmarks query)
// and user keyvals with their copy/delete callbacks, run on MPI_Comm_dup and MPI_Comm_free.
#include <algorithm>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

struct Keyval {
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra = nullptr;
  int refs = 0;  // the handle (until MPI_Comm_free_keyval) + one per attribute set with it
};
Table<Keyval>& keyvals() {
  static Table<Keyval> t;
  return t;
}
void keyvalRelease(int idx) {
  if (Keyval* k = keyvals().get(idx); k && --k->refs == 0) keyvals().remove(idx);
}

// Values of the predefined attributes; MPI hands out pointers to them.
int gTagUb = RRT_TAG_UB, gHost = MPI_PROC_NULL, gIo = MPI_ANY_SOURCE, gWtimeGlobal = 0,
    gUniverse = 1, gLastCode = MPI_ERR_LASTCODE, gAppnum = 0;

int* predefined(int keyval) {
  switch (keyval) {
    case MPI_TAG_UB: return &gTagUb;
    case MPI_HOST: return &gHost;
    case MPI_IO: return &gIo;
    case MPI_WTIME_IS_GLOBAL: return &gWtimeGlobal;
    case MPI_UNIVERSE_SIZE: rrt_comm_size(RRT_COMM_WORLD, &gUniverse); return &gUniverse;
    case MPI_LASTUSEDCODE: return &gLastCode;
    case MPI_APPNUM: return &gAppnum;
    default: return nullptr;
  }
}

int deleteOne(MPI_Comm handle, Comm& c, int keyval) {
  auto it = c.attrs.find(keyval);
  if (it == c.attrs.end()) return MPI_SUCCESS;
  int idx = handleIndex(keyval, kKindKeyval);
  Keyval* k = keyvals().get(idx);
  if (k && k->del) {
    if (int rc = k->del(handle, keyval, it->second, k->extra)) return rc;
  }
  c.attrs.erase(it);
  c.attrOrder.erase(std::find(c.attrOrder.begin(), c.attrOrder.end(), keyval));
  keyvalRelease(idx);
  return MPI_SUCCESS;
}

}  // namespace

int attrCopyAll(MPI_Comm oldHandle, Comm& old, Comm& fresh) {
  for (auto& [key, value] : old.attrs) {
    int idx = handleIndex(key, kKindKeyval);
    Keyval* k = keyvals().get(idx);
    if (!k || !k->copy) continue;
    void* out = nullptr;
    int flag = 0;
    if (int rc = k->copy(oldHandle, key, k->extra, value, &out, &flag)) return rc;
    if (flag) {
      if (fresh.attrs.count(key) == 0) fresh.attrOrder.push_back(key);
      fresh.attrs[key] = out;
      ++k->refs;
    }
  }
  return MPI_SUCCESS;
}

// Last set, first deleted (MPI 3.1 section 8.7.1 asks it of MPI_COMM_SELF at MPI_Finalize).
int attrDeleteAll(MPI_Comm handle, Comm& c) {
  while (!c.attrOrder.empty())
    if (int rc = deleteOne(handle, c, c.attrOrder.back())) return rc;
  return MPI_SUCCESS;
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

RRT_MPI_WEAK_ALIAS(MPI_Comm_create_keyval);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                            MPI_Comm_delete_attr_function* delete_fn, int* keyval,
                            void* extra_state) {
  if (keyval == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int idx = keyvals().add(Keyval{copy_fn, delete_fn, extra_state, 1});
  if (idx >= 0x400000) return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  *keyval = kKindKeyval | idx;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_free_keyval);
int PMPI_Comm_free_keyval(int* keyval) {
  int idx = keyval ? handleIndex(*keyval, kKindKeyval) : -1;
  if (keyvals().get(idx) == nullptr || predefined(*keyval))
    return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, __func__);
  keyvalRelease(idx);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_set_attr);
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  int idx = handleIndex(keyval, kKindKeyval);
  if (predefined(keyval) || keyvals().get(idx) == nullptr)
    return raise(comm, MPI_ERR_KEYVAL, __func__);
  if (int rc = deleteOne(comm, *c, keyval)) return raise(comm, rc, __func__);
  c->attrs[keyval] = attribute_val;
  c->attrOrder.push_back(keyval);
  ++keyvals().get(idx)->refs;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_get_attr);
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (int* v = predefined(keyval)) {
    *static_cast<void**>(attribute_val) = v;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (keyvals().get(handleIndex(keyval, kKindKeyval)) == nullptr)
    return raise(comm, MPI_ERR_KEYVAL, __func__);
  auto it = c->attrs.find(keyval);
  *flag = it != c->attrs.end();
  if (*flag) *static_cast<void**>(attribute_val) = it->second;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_delete_attr);
int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (predefined(keyval) || keyvals().get(handleIndex(keyval, kKindKeyval)) == nullptr)
    return raise(comm, MPI_ERR_KEYVAL, __func__);
  if (int rc = deleteOne(comm, *c, keyval)) return raise(comm, rc, __func__);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Keyval_create);
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
RRT_MPI_WEAK_ALIAS(MPI_Keyval_free);
int PMPI_Keyval_free(int* keyval) { return PMPI_Comm_free_keyval(keyval); }
RRT_MPI_WEAK_ALIAS(MPI_Attr_put);
int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
RRT_MPI_WEAK_ALIAS(MPI_Attr_get);
int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
RRT_MPI_WEAK_ALIAS(MPI_Attr_delete);
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }

}  // extern "C"

// MPI_Info: ordered key/value hints. rrt takes no hints yet, so they are only stored and
// returned (MPI allows an implementation to ignore any hint).
#include <algorithm>
#include <cstring>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {
using Map = std::map<std::string, std::string>;
Table<Map>& infos() {
  static Table<Map> t;
  return t;
}
}  // namespace

Map* infoGet(MPI_Info handle) { return infos().get(handleIndex(handle, kKindInfo)); }

int infoMake(Map kv, MPI_Info* out) {
  *out = kKindInfo | infos().add(std::move(kv));
  return MPI_SUCCESS;
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

#define GET_INFO(var, handle)                                                   \
  auto* var = infoGet(handle);                                                  \
  if (var == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, __func__)

static bool keyOk(const char* key) {
  return key != nullptr && key[0] != '\0' && std::strlen(key) <= MPI_MAX_INFO_KEY;
}

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Info_create);
int PMPI_Info_create(MPI_Info* info) { return infoMake({}, info); }

RRT_MPI_WEAK_ALIAS(MPI_Info_set);
int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  GET_INFO(m, info);
  if (!keyOk(key)) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (value == nullptr || value[0] == '\0' || std::strlen(value) > MPI_MAX_INFO_VAL)
    return raise(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, __func__);
  (*m)[key] = value;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_get);
int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  GET_INFO(m, info);
  if (!keyOk(key)) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (valuelen < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  auto it = m->find(key);
  *flag = it != m->end();
  if (*flag) {  // at most valuelen characters, plus the terminating NUL (MPI 3.1 section 9)
    size_t n = std::min(it->second.size(), static_cast<size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_get_valuelen);
int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  GET_INFO(m, info);
  if (!keyOk(key)) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  auto it = m->find(key);
  *flag = it != m->end();
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_get_nkeys);
int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  GET_INFO(m, info);
  *nkeys = static_cast<int>(m->size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_get_nthkey);
int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  GET_INFO(m, info);
  if (n < 0 || n >= static_cast<int>(m->size())) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  auto it = m->begin();
  std::advance(it, n);
  std::memcpy(key, it->first.c_str(), it->first.size() + 1);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_delete);
int PMPI_Info_delete(MPI_Info info, const char* key) {
  GET_INFO(m, info);
  if (!keyOk(key)) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (m->erase(key) == 0) return raise(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, __func__);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Info_dup);
int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  GET_INFO(m, info);
  return infoMake(*m, newinfo);
}

RRT_MPI_WEAK_ALIAS(MPI_Info_free);
int PMPI_Info_free(MPI_Info* info) {
  if (info == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  GET_INFO(m, *info);
  (void)m;
  infos().remove(handleIndex(*info, kKindInfo));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

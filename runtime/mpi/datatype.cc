// MPI datatypes: the predefined C types mapped to rrt's predefined types, and derived types
// (contiguous, vector, indexed, struct, subarray, resized) kept as flattened layouts
// (typemap.cc). rrt itself only ever sees predefined types, bytes, or (for user-op reductions)
// an rrt contiguous type of one element's extent.
#include <climits>
#include <cstddef>
#include <complex.h>
#include <cstring>
#include <unordered_map>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/typemap.h"

namespace rrt::mpi {
// At namespace scope, not a function-local static: no initialization guard on every lookup.
Table<Type> gTypes;

namespace {

Table<Type>& types() { return gTypes; }
std::unordered_map<rrt_datatype_t, MPI_Datatype>& opTypes() {
  static std::unordered_map<rrt_datatype_t, MPI_Datatype> m;
  return m;
}

struct Predef {
  const char* name;
  rrt_datatype_t rrt;
  size_t align;
  // (value, index) pair types: the value's size and the int's offset in the C struct; their
  // MPI size is value + int (no padding) and their true extent ends with the int.
  size_t pairValue = 0, pairIndexAt = 0;
};
// The C structs MINLOC/MAXLOC programs use for the pair types.
struct FloatInt { float v; int i; };
struct DoubleInt { double v; int i; };
struct LongInt { long v; int i; };
struct IntInt { int v; int i; };
struct ShortInt { short v; int i; };
struct LongDoubleInt { long double v; int i; };
static_assert(sizeof(long) == 8 && sizeof(long long) == 8 && sizeof(wchar_t) == 4,
              "rrt's MPI maps C types for LP64 Linux");
// Indexed like the RRT_MPI_TYPE_(i) numbers in mpi.h.
const Predef kPredef[RRT_MPI_PREDEFINED_TYPES_] = {
    {"", RRT_DATATYPE_NULL, 1},
    {"MPI_CHAR", RRT_CHAR, 1},
    {"MPI_SIGNED_CHAR", RRT_INT8, 1},
    {"MPI_UNSIGNED_CHAR", RRT_UINT8, 1},
    {"MPI_BYTE", RRT_BYTE, 1},
    {"MPI_SHORT", RRT_INT16, alignof(short)},
    {"MPI_UNSIGNED_SHORT", RRT_UINT16, alignof(short)},
    {"MPI_INT", RRT_INT32, alignof(int)},
    {"MPI_UNSIGNED", RRT_UINT32, alignof(int)},
    {"MPI_LONG", RRT_INT64, alignof(long)},
    {"MPI_UNSIGNED_LONG", RRT_UINT64, alignof(long)},
    {"MPI_LONG_LONG_INT", RRT_INT64, alignof(long long)},
    {"MPI_UNSIGNED_LONG_LONG", RRT_UINT64, alignof(long long)},
    {"MPI_FLOAT", RRT_FLOAT, alignof(float)},
    {"MPI_DOUBLE", RRT_DOUBLE, alignof(double)},
    {"MPI_LONG_DOUBLE", RRT_LONG_DOUBLE, alignof(long double)},
    {"MPI_WCHAR", RRT_INT32, alignof(wchar_t)},
    {"MPI_C_BOOL", RRT_BOOL, alignof(bool)},
    {"MPI_INT8_T", RRT_INT8, 1},
    {"MPI_INT16_T", RRT_INT16, 2},
    {"MPI_INT32_T", RRT_INT32, 4},
    {"MPI_INT64_T", RRT_INT64, 8},
    {"MPI_UINT8_T", RRT_UINT8, 1},
    {"MPI_UINT16_T", RRT_UINT16, 2},
    {"MPI_UINT32_T", RRT_UINT32, 4},
    {"MPI_UINT64_T", RRT_UINT64, 8},
    {"MPI_C_FLOAT_COMPLEX", RRT_C_FLOAT_COMPLEX, alignof(float)},
    {"MPI_C_DOUBLE_COMPLEX", RRT_C_DOUBLE_COMPLEX, alignof(double)},
    {"MPI_AINT", RRT_INT64, 8},
    {"MPI_OFFSET", RRT_INT64, 8},
    {"MPI_COUNT", RRT_INT64, 8},
    {"MPI_PACKED", RRT_BYTE, 1},
    {"MPI_CXX_BOOL", RRT_BOOL, 1},
    {"MPI_FLOAT_INT", RRT_FLOAT_INT, 4, sizeof(float), offsetof(FloatInt, i)},
    {"MPI_DOUBLE_INT", RRT_DOUBLE_INT, 8, sizeof(double), offsetof(DoubleInt, i)},
    {"MPI_LONG_INT", RRT_LONG_INT, 8, sizeof(long), offsetof(LongInt, i)},
    {"MPI_2INT", RRT_2INT, 4, sizeof(int), offsetof(IntInt, i)},
    {"MPI_SHORT_INT", RRT_SHORT_INT, 4, sizeof(short), offsetof(ShortInt, i)},
    {"MPI_LONG_DOUBLE_INT", RRT_LONG_DOUBLE_INT, alignof(long double), sizeof(long double),
     offsetof(LongDoubleInt, i)},
    {"MPI_CXX_FLOAT_COMPLEX", RRT_C_FLOAT_COMPLEX, alignof(float)},
    {"MPI_CXX_DOUBLE_COMPLEX", RRT_C_DOUBLE_COMPLEX, alignof(double)},
};

// A new derived type from pieces; committed later by MPI_Type_commit.
int makeDerived(const std::vector<Piece>& pieces, bool structAlign, MPI_Datatype* out) {
  Type t;
  typeBuild(pieces, structAlign, &t);
  *out = kKindType | types().add(std::move(t));
  return MPI_SUCCESS;
}

// Records the constructor of a new type for MPI_Type_get_envelope (rc: the constructor's result).
int envelope(int rc, const MPI_Datatype* handle, int combiner, int nInts, int nAddrs, int nTypes) {
  if (rc != MPI_SUCCESS) return rc;
  Type* t = typeGet(*handle);
  t->combiner = combiner;
  t->nInts = nInts;
  t->nAddrs = nAddrs;
  t->nTypes = nTypes;
  return MPI_SUCCESS;
}

int typeErr(const char* fn) { return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, fn); }
int argErr(const char* fn) { return raise(MPI_COMM_WORLD, MPI_ERR_ARG, fn); }

}  // namespace

// A type freed while persistent requests hold it stays valid for them (and, erroneously used,
// for the program) until the last one lets go.
namespace {
void typeDestroy(MPI_Datatype handle, Type* t) {
  if (t->opType != RRT_DATATYPE_NULL) {
    opTypes().erase(t->opType);
    rrt_type_free(&t->opType);
  }
  types().remove(handleIndex(handle, kKindType));
}
}  // namespace

void typeRetain(MPI_Datatype handle) {
  if (Type* t = types().get(handleIndex(handle, kKindType))) ++t->refs;
}

void typeRelease(MPI_Datatype handle) {
  Type* t = types().get(handleIndex(handle, kKindType));
  if (t && --t->refs == 0 && t->freed) typeDestroy(handle, t);
}

// rrt lays the (value, index) pairs out as the C structs and moves them padding included (size,
// extent); their MPI size (sigSize) and true extent leave the padding out.
void typesInit() {
  if (types().capacity() > 0) return;
  for (int i = 0; i < RRT_MPI_PREDEFINED_TYPES_; ++i) {
    Type t;
    t.predefined = t.committed = true;
    t.name = kPredef[i].name;
    t.rrtType = t.base = kPredef[i].rrt;
    t.align = kPredef[i].align;
    if (i > 0) {
      size_t size = 0, extent = 0;
      rrt_type_size(t.rrtType, &size);
      rrt_type_extent(t.rrtType, &extent);
      t.size = t.sigSize = size;
      t.nBasic = 1;
      t.extent = t.trueUb = static_cast<long>(extent);
      if (kPredef[i].pairValue > 0) {
        t.sigSize = kPredef[i].pairValue + sizeof(int);
        t.trueUb = static_cast<long>(kPredef[i].pairIndexAt + sizeof(int));
      }
      t.runs.push_back(Run{0, t.rrtType, 1, size});
      t.blocks.push_back(Block{0, size});
    }
    types().add(std::move(t));
  }
  types().remove(0);  // index 0 is no type; the slot is free for a derived one
}

int typeOpType(MPI_Datatype handle, Type& t, rrt_datatype_t* out) {
  if (t.opType == RRT_DATATYPE_NULL) {
    if (t.lb != 0 || t.trueLb < 0 || t.trueUb > t.extent || t.extent <= 0) return MPI_ERR_TYPE;
    int rc = rrt_type_contiguous(static_cast<size_t>(t.extent), RRT_BYTE, &t.opType);
    if (rc != RRT_SUCCESS) return fromRrt(rc);
    opTypes()[t.opType] = handle;
  }
  *out = t.opType;
  return MPI_SUCCESS;
}

MPI_Datatype typeFromOpType(rrt_datatype_t rrtType) {
  auto it = opTypes().find(rrtType);
  return it == opTypes().end() ? MPI_DATATYPE_NULL : it->second;
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

#define GET_TYPE(var, handle)                  \
  Type* var = typeGet(handle);                 \
  if (var == nullptr) return typeErr(__func__)

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Type_size);
int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  GET_TYPE(t, datatype);
  *size = t->sigSize > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->sigSize);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_size_x);
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  GET_TYPE(t, datatype);
  *size = static_cast<MPI_Count>(t->sigSize);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_get_extent);
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  GET_TYPE(t, datatype);
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_get_extent_x);
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  GET_TYPE(t, datatype);
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_get_true_extent);
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  GET_TYPE(t, datatype);
  *true_lb = t->trueLb;
  *true_extent = t->trueUb - t->trueLb;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_contiguous);
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  return envelope(makeDerived({Piece{0, static_cast<size_t>(count), t}}, false, newtype), newtype,
                  MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_hvector);
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  if (count < 0 || blocklength < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<Piece> p;
  for (int i = 0; i < count; ++i) p.push_back(Piece{i * stride, static_cast<size_t>(blocklength), t});
  return envelope(makeDerived(p, false, newtype), newtype, MPI_COMBINER_HVECTOR, 2, 1, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_vector);
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  return envelope(PMPI_Type_create_hvector(count, blocklength,
                                           static_cast<MPI_Aint>(stride) * t->extent, oldtype,
                                           newtype),
                  newtype, MPI_COMBINER_VECTOR, 3, 0, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_hindexed);
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<Piece> p;
  for (int i = 0; i < count; ++i) {
    if (array_of_blocklengths[i] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
    p.push_back(Piece{array_of_displacements[i], static_cast<size_t>(array_of_blocklengths[i]), t});
  }
  return envelope(makeDerived(p, false, newtype), newtype, MPI_COMBINER_HINDEXED, count + 1,
                  count, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_indexed);
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<MPI_Aint> d(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) d[i] = static_cast<MPI_Aint>(array_of_displacements[i]) * t->extent;
  return envelope(
      PMPI_Type_create_hindexed(count, array_of_blocklengths, d.data(), oldtype, newtype),
      newtype, MPI_COMBINER_INDEXED, 2 * count + 1, 0, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_hindexed_block);
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<int> b(static_cast<size_t>(count), blocklength);
  return envelope(PMPI_Type_create_hindexed(count, b.data(), array_of_displacements, oldtype,
                                            newtype),
                  newtype, MPI_COMBINER_HINDEXED_BLOCK, 2, count, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_indexed_block);
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<int> b(static_cast<size_t>(count), blocklength);
  return envelope(PMPI_Type_indexed(count, b.data(), array_of_displacements, oldtype, newtype),
                  newtype, MPI_COMBINER_INDEXED_BLOCK, count + 2, 0, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_struct);
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  std::vector<Piece> p;
  for (int i = 0; i < count; ++i) {
    GET_TYPE(t, array_of_types[i]);
    if (array_of_blocklengths[i] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
    p.push_back(Piece{array_of_displacements[i], static_cast<size_t>(array_of_blocklengths[i]), t});
  }
  return envelope(makeDerived(p, true, newtype), newtype, MPI_COMBINER_STRUCT, count + 1, count,
                  count);
}

// An ndims-dimensional block of a larger array: rows of subsizes[last] elements, the whole
// type resized to the full array so that consecutive elements tile it.
RRT_MPI_WEAK_ALIAS(MPI_Type_create_subarray);
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  if (ndims <= 0 || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)) return argErr(__func__);
  std::vector<int> sizes(array_of_sizes, array_of_sizes + ndims);
  std::vector<int> sub(array_of_subsizes, array_of_subsizes + ndims);
  std::vector<int> start(array_of_starts, array_of_starts + ndims);
  if (order == MPI_ORDER_FORTRAN) {
    std::reverse(sizes.begin(), sizes.end());
    std::reverse(sub.begin(), sub.end());
    std::reverse(start.begin(), start.end());
  }
  for (int d = 0; d < ndims; ++d)
    if (sizes[d] <= 0 || sub[d] <= 0 || start[d] < 0 || start[d] + sub[d] > sizes[d])
      return argErr(__func__);
  // Element strides of each dimension (row-major).
  std::vector<long> stride(static_cast<size_t>(ndims), 1);
  for (int d = ndims - 2; d >= 0; --d) stride[d] = stride[d + 1] * sizes[d + 1];
  long rows = 1;
  for (int d = 0; d < ndims - 1; ++d) rows *= sub[d];
  std::vector<Piece> p;
  std::vector<int> idx(static_cast<size_t>(ndims), 0);
  for (long r = 0; r < rows; ++r) {
    long off = start[ndims - 1];
    for (int d = 0; d < ndims - 1; ++d) off += (start[d] + idx[d]) * stride[d];
    p.push_back(Piece{off * t->extent, static_cast<size_t>(sub[ndims - 1]), t});
    for (int d = ndims - 2; d >= 0; --d) {  // next row index, last dimension fastest
      if (++idx[d] < sub[d]) break;
      idx[d] = 0;
    }
  }
  Type nt;
  typeBuild(p, false, &nt);
  nt.lb = 0;
  nt.extent = stride[0] * sizes[0] * t->extent;
  *newtype = kKindType | types().add(std::move(nt));
  return envelope(MPI_SUCCESS, newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_create_resized);
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  Type nt;
  typeBuild({Piece{0, 1, t}}, false, &nt);
  nt.lb = lb;
  nt.extent = extent;
  *newtype = kKindType | types().add(std::move(nt));
  return envelope(MPI_SUCCESS, newtype, MPI_COMBINER_RESIZED, 0, 2, 1);
}

RRT_MPI_WEAK_ALIAS(MPI_Type_dup);
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  GET_TYPE(t, oldtype);
  Type nt = *t;
  nt.predefined = false;
  nt.committed = t->committed;
  nt.opType = RRT_DATATYPE_NULL;
  nt.name.clear();
  *newtype = kKindType | types().add(std::move(nt));
  return envelope(MPI_SUCCESS, newtype, MPI_COMBINER_DUP, 0, 0, 1);
}

// Committing a predefined type is allowed and does nothing (as in Open MPI and MPICH).
RRT_MPI_WEAK_ALIAS(MPI_Type_commit);
int PMPI_Type_commit(MPI_Datatype* datatype) {
  if (datatype == nullptr) return argErr(__func__);
  GET_TYPE(t, *datatype);
  t->committed = true;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_free);
int PMPI_Type_free(MPI_Datatype* datatype) {
  if (datatype == nullptr) return argErr(__func__);
  GET_TYPE(t, *datatype);
  if (t->predefined || t->freed) return typeErr(__func__);
  t->freed = true;
  if (t->refs == 0) typeDestroy(*datatype, t);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_get_envelope);
int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                           int* num_datatypes, int* combiner) {
  GET_TYPE(t, datatype);
  if (!num_integers || !num_addresses || !num_datatypes || !combiner) return argErr(__func__);
  *num_integers = t->nInts;
  *num_addresses = t->nAddrs;
  *num_datatypes = t->nTypes;
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_get_name);
int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  GET_TYPE(t, datatype);
  std::memcpy(type_name, t->name.c_str(), t->name.size() + 1);
  *resultlen = static_cast<int>(t->name.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Type_set_name);
int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  GET_TYPE(t, datatype);
  if (type_name == nullptr) return argErr(__func__);
  t->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_count);
int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  GET_TYPE(t, datatype);
  if (status == MPI_STATUS_IGNORE) return argErr(__func__);
  size_t bytes = status->rrt_bytes_;
  if (t->size == 0)
    *count = 0;
  else if (bytes % t->size != 0 || bytes / t->size > INT_MAX)
    *count = MPI_UNDEFINED;
  else
    *count = static_cast<int>(bytes / t->size);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_elements_x);
int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  GET_TYPE(t, datatype);
  if (status == MPI_STATUS_IGNORE) return argErr(__func__);
  size_t n = typeElements(*t, status->rrt_bytes_);
  *count = n == static_cast<size_t>(-1) ? MPI_UNDEFINED : static_cast<MPI_Count>(n);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Get_elements);
int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  MPI_Count n;
  if (int e = PMPI_Get_elements_x(status, datatype, &n)) return e;
  *count = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Status_set_elements);
int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  GET_TYPE(t, datatype);
  if (status == MPI_STATUS_IGNORE || count < 0) return argErr(__func__);
  status->rrt_bytes_ = typeBytesOfElements(*t, static_cast<size_t>(count));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Pack_size);
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  GET_TYPE(t, datatype);
  int err;
  if (!commCheck(comm, __func__, &err)) return err;
  if (incount < 0) return raise(comm, MPI_ERR_COUNT, __func__);
  *size = static_cast<int>(t->size * static_cast<size_t>(incount));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Pack);
int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
  GET_TYPE(t, datatype);
  int err;
  if (!commCheck(comm, __func__, &err)) return err;
  if (incount < 0) return raise(comm, MPI_ERR_COUNT, __func__);
  if (!t->committed) return raise(comm, MPI_ERR_TYPE, __func__);
  size_t bytes = t->size * static_cast<size_t>(incount);
  if (*position < 0 || static_cast<size_t>(outsize - *position) < bytes || outsize < *position)
    return raise(comm, MPI_ERR_TRUNCATE, __func__);
  typePack(*t, inbuf, static_cast<size_t>(incount), static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Unpack);
int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
  GET_TYPE(t, datatype);
  int err;
  if (!commCheck(comm, __func__, &err)) return err;
  if (outcount < 0) return raise(comm, MPI_ERR_COUNT, __func__);
  if (!t->committed) return raise(comm, MPI_ERR_TYPE, __func__);
  size_t bytes = t->size * static_cast<size_t>(outcount);
  if (*position < 0 || insize < *position || static_cast<size_t>(insize - *position) < bytes)
    return raise(comm, MPI_ERR_TRUNCATE, __func__);
  typeUnpack(*t, static_cast<const char*>(inbuf) + *position, bytes, outbuf,
             static_cast<size_t>(outcount));
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

}  // extern "C"

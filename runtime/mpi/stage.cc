// How an MPI buffer (address, count, datatype) is handed to rrt: as itself when the datatype is
// predefined or its elements lie back to back, else through a packed temporary copy.
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {
RrtBuf direct(const Type& t, const void* buf, size_t count, bool typed) {
  RrtBuf b;
  if (t.predefined) {
    b.ptr = const_cast<void*>(buf);
    b.count = count;
    b.type = t.rrtType;
    return b;
  }
  b.ptr = const_cast<char*>(static_cast<const char*>(buf)) + typeDataOffset(t);
  b.count = typed ? count * t.nBasic : count * t.size;
  b.type = typed ? t.base : RRT_BYTE;
  return b;
}
}  // namespace

RrtBuf stageIn(Stage& st, const Type& t, const void* buf, size_t count, bool typed) {
  if (t.predefined || typeDense(t) || count == 0) return direct(t, buf, count, typed);
  char* tmp = st.temp(count * t.size);
  typePack(t, buf, count, tmp);
  RrtBuf b{tmp, typed ? count * t.nBasic : count * t.size, typed ? t.base : RRT_BYTE};
  return b;
}

RrtBuf stageOut(Stage& st, const Type& t, void* buf, size_t count, bool inout, bool typed) {
  if (t.predefined || typeDense(t) || count == 0) return direct(t, buf, count, typed);
  size_t bytes = count * t.size;
  char* tmp = st.temp(bytes);
  if (inout) typePack(t, buf, count, tmp);
  // MPI_Type_free right after a non-blocking call is legal: the unpack keeps its own layout.
  Type copy;
  copy.blocks = t.blocks;
  copy.extent = t.extent;
  st.onFinish([copy = std::move(copy), tmp, bytes, buf, count](size_t got) {
    typeUnpack(copy, tmp, got < bytes ? got : bytes, buf, count);
  });
  RrtBuf b{tmp, typed ? count * t.nBasic : bytes, typed ? t.base : RRT_BYTE};
  return b;
}

}  // namespace rrt::mpi

// Datatype layout arithmetic (typemap.cc): building a flattened layout from pieces of older
// types, and the per-type helpers of state.h.
#pragma once

#include <vector>

#include "runtime/mpi/state.h"

namespace rrt::mpi {

// blen elements of type, starting disp bytes from the new type's origin.
struct Piece {
  long disp;
  size_t blen;
  const Type* type;
};
// Fills out's layout fields (runs, blocks, size, nBasic, bounds, base, align) from pieces.
void typeBuild(const std::vector<Piece>& pieces, bool structAlign, Type* out);
void typeAppend(Type* out, long disp, const Type& old, size_t blen);
// Bytes of data holding the first elements predefined elements of t's type signature.
size_t typeBytesOfElements(const Type& t, size_t elements);

}  // namespace rrt::mpi

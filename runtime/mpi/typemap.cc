// Datatype layouts: flattening constructors into runs and byte blocks, packing, unpacking and
// counting predefined elements. rrt moves contiguous bytes only; every non-contiguous MPI type
// goes through a packed copy made here.
#include <algorithm>
#include <cstring>

#include "runtime/mpi/typemap.h"

namespace rrt::mpi {

void typeAppend(Type* out, long disp, const Type& old, size_t blen) {
  for (size_t j = 0; j < blen; ++j) {
    long base = disp + static_cast<long>(j) * old.extent;
    for (const Run& r : old.runs) {
      long d = base + r.disp;
      if (!out->runs.empty()) {
        Run& last = out->runs.back();
        if (last.type == r.type && last.disp + static_cast<long>(last.n * last.typeSize) == d) {
          last.n += r.n;
          goto runs_done;
        }
      }
      out->runs.push_back(Run{d, r.type, r.n, r.typeSize});
    runs_done:;
    }
    for (const Block& b : old.blocks) {
      long d = base + b.disp;
      if (!out->blocks.empty() && out->blocks.back().disp +
                                          static_cast<long>(out->blocks.back().len) == d)
        out->blocks.back().len += b.len;
      else
        out->blocks.push_back(Block{d, b.len});
    }
  }
}

void typeBuild(const std::vector<Piece>& pieces, bool structAlign, Type* out) {
  out->runs.clear();
  out->blocks.clear();
  out->size = 0;
  out->sigSize = 0;
  out->nBasic = 0;
  out->align = 1;
  bool any = false;
  long lb = 0, ub = 0, tlb = 0, tub = 0;
  rrt_datatype_t base = RRT_DATATYPE_NULL;
  bool mixed = false;
  for (const Piece& p : pieces) {
    const Type& t = *p.type;
    if (p.blen == 0) continue;
    typeAppend(out, p.disp, t, p.blen);
    out->size += t.size * p.blen;
    out->sigSize += t.sigSize * p.blen;
    out->nBasic += t.nBasic * p.blen;
    out->align = std::max(out->align, t.align);
    // The blen copies sit at p.disp + j * extent; a negative extent (MPI_Type_create_resized)
    // puts the last copy lowest.
    const long span = static_cast<long>(p.blen - 1) * t.extent;
    long plb = p.disp + t.lb + std::min(0L, span);
    long pub = p.disp + t.lb + t.extent + std::max(0L, span);
    long ptlb = p.disp + t.trueLb + std::min(0L, span);
    long ptub = p.disp + t.trueUb + std::max(0L, span);
    if (!any) {
      lb = plb, ub = pub, tlb = ptlb, tub = ptub;
      any = true;
    } else {
      lb = std::min(lb, plb), ub = std::max(ub, pub);
      tlb = std::min(tlb, ptlb), tub = std::max(tub, ptub);
    }
    if (t.size > 0) {
      if (t.base == RRT_DATATYPE_NULL || (base != RRT_DATATYPE_NULL && base != t.base)) mixed = true;
      base = t.base;
    }
  }
  // Struct types round their extent up to the strictest alignment inside, as C does (and as
  // Open MPI and MPICH do), so arrays of the matching C struct line up.
  long extent = ub - lb;
  if (structAlign && out->align > 1 && extent % static_cast<long>(out->align))
    extent += static_cast<long>(out->align) - extent % static_cast<long>(out->align);
  out->lb = lb;
  out->extent = extent;
  out->trueLb = any ? tlb : 0;
  out->trueUb = any ? tub : 0;
  out->base = mixed ? RRT_DATATYPE_NULL : base;
}

void typePack(const Type& t, const void* in, size_t count, char* out) {
  const char* src = static_cast<const char*>(in);
  for (size_t i = 0; i < count; ++i, src += t.extent)
    for (const Block& b : t.blocks) {
      std::memcpy(out, src + b.disp, b.len);
      out += b.len;
    }
}

void typeUnpack(const Type& t, const char* in, size_t bytes, void* outv, size_t count) {
  char* dst = static_cast<char*>(outv);
  for (size_t i = 0; i < count && bytes > 0; ++i, dst += t.extent)
    for (const Block& b : t.blocks) {
      size_t n = std::min(b.len, bytes);
      std::memcpy(dst + b.disp, in, n);
      in += n;
      bytes -= n;
      if (bytes == 0) return;
    }
}

size_t typeElements(const Type& t, size_t bytes) {
  if (t.size == 0) return 0;
  size_t full = bytes / t.size, rem = bytes % t.size;
  size_t n = full * t.nBasic;
  for (const Run& r : t.runs) {
    if (rem == 0) break;
    size_t k = std::min(r.n, rem / r.typeSize);
    n += k;
    rem -= k * r.typeSize;
    if (k < r.n) break;
  }
  return rem == 0 ? n : static_cast<size_t>(-1);
}

size_t typeBytesOfElements(const Type& t, size_t elements) {
  if (t.nBasic == 0) return 0;
  size_t full = elements / t.nBasic, rem = elements % t.nBasic;
  size_t bytes = full * t.size;
  for (const Run& r : t.runs) {
    if (rem == 0) break;
    size_t k = std::min(r.n, rem);
    bytes += k * r.typeSize;
    rem -= k;
  }
  return bytes;
}

}  // namespace rrt::mpi

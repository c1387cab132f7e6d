// The profiling interface (MPI 3.1 section 14.2): each MPI function is defined as PMPI_X, and
// MPI_X is a weak alias of that definition. A tool library (a tracer, a call counter) defines a
// strong MPI_X of its own that calls PMPI_X, and the link picks the tool's: a strong definition
// beats a weak one in a static link, and the executable's symbol comes first in a dynamic one.
// Calls from one MPI function to another inside the layer go to PMPI_X, so the tool sees only
// the program's own calls.
#pragma once

// Declares MPI_X a weak alias of PMPI_X, which the same translation unit must define (GCC and
// clang resolve the alias there). The functions are extern "C", so the assembler name of PMPI_X
// is the identifier itself. decltype gives the alias PMPI_X's type: a PMPI_X whose signature
// differs from mpi.h's MPI_X does not compile.
#define RRT_MPI_WEAK_ALIAS(name) \
  extern "C" decltype(P##name) name __attribute__((weak, alias("P" #name)))

# tests/mpi: MPI programs (see runtime/mpi/local.mk)

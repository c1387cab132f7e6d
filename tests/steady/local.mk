# tests/steady: the fast path allocates nothing once warm (steady_allocs.sh counts every rank's
# heap allocations through the alloc_count.c LD_PRELOAD shim, a module never installed).
check_LTLIBRARIES += tests/steady/liballoccount.la
tests_steady_liballoccount_la_SOURCES = tests/steady/alloc_count.c
tests_steady_liballoccount_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
TESTS += tests/steady/steady_allocs.sh
EXTRA_DIST += tests/steady/steady_allocs.sh
check_PROGRAMS += tests/steady/mpi_vcoll
tests_steady_mpi_vcoll_SOURCES = tests/steady/mpi_vcoll.c
tests_steady_mpi_vcoll_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_steady_mpi_vcoll_LDADD = $(MPI_TEST_LIBS)
tests_steady_mpi_vcoll_LDFLAGS = $(MPI_TEST_LINK)

# tests/mpi: MPI programs of the project's own, built against librrt_mpi (included from
# runtime/mpi/local.mk). The same sources build unchanged with Open MPI's mpicc: mpi_openmpi.sh
# compares the two. -no-install: real binaries, so rrun and mpirun exec the same kind of file.
MPI_TEST_PROGS = tests/mpi/mpi_p2p tests/mpi/mpi_coll tests/mpi/mpi_comm tests/mpi/mpi_dtype \
	tests/mpi/mpi_topo tests/mpi/mpi_env tests/mpi/mpi_rma tests/mpi/mpi_rma_osu \
	tests/mpi/mpi_pairtype tests/mpi/mpi_cancel tests/mpi/mpi_neighbor tests/mpi/mpi_profile
check_PROGRAMS += $(MPI_TEST_PROGS)
MPI_TEST_CPPFLAGS = -I$(top_srcdir)/include/rrt/mpi
MPI_TEST_LIBS = librrt_mpi.la librrt.la
MPI_TEST_LINK = $(AM_LDFLAGS) -no-install

tests_mpi_mpi_p2p_SOURCES = tests/mpi/mpi_p2p.c tests/mpi/mtest.h
tests_mpi_mpi_p2p_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_p2p_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_p2p_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_coll_SOURCES = tests/mpi/mpi_coll.c tests/mpi/mtest.h
tests_mpi_mpi_coll_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_coll_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_coll_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_comm_SOURCES = tests/mpi/mpi_comm.c tests/mpi/mtest.h
tests_mpi_mpi_comm_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_comm_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_comm_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_dtype_SOURCES = tests/mpi/mpi_dtype.c tests/mpi/mtest.h
tests_mpi_mpi_dtype_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_dtype_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_dtype_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_topo_SOURCES = tests/mpi/mpi_topo.c tests/mpi/mtest.h
tests_mpi_mpi_topo_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_topo_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_topo_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_neighbor_SOURCES = tests/mpi/mpi_neighbor.c tests/mpi/mtest.h
tests_mpi_mpi_neighbor_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_neighbor_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_neighbor_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_env_SOURCES = tests/mpi/mpi_env.c tests/mpi/mtest.h
tests_mpi_mpi_env_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_env_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_env_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_rma_SOURCES = tests/mpi/mpi_rma.c tests/mpi/mtest.h
tests_mpi_mpi_rma_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_rma_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_rma_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_rma_osu_SOURCES = tests/mpi/mpi_rma_osu.c tests/mpi/mtest.h
tests_mpi_mpi_rma_osu_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_rma_osu_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_rma_osu_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_cancel_SOURCES = tests/mpi/mpi_cancel.c tests/mpi/mtest.h
tests_mpi_mpi_cancel_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_cancel_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_cancel_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_pairtype_SOURCES = tests/mpi/mpi_pairtype.c tests/mpi/mtest.h
tests_mpi_mpi_pairtype_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_pairtype_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_pairtype_LDFLAGS = $(MPI_TEST_LINK)
tests_mpi_mpi_profile_SOURCES = tests/mpi/mpi_profile.c tests/mpi/mtest.h
tests_mpi_mpi_profile_CPPFLAGS = $(MPI_TEST_CPPFLAGS)
tests_mpi_mpi_profile_LDADD = $(MPI_TEST_LIBS)
tests_mpi_mpi_profile_LDFLAGS = $(MPI_TEST_LINK)

# Order matters for the comparison: mpi_rrt.sh leaves the outputs mpi_openmpi.sh compares
# (it reruns rrt itself when they are missing, so parallel make check stays correct).
TESTS += tests/mpi/mpi_rrt.sh tests/mpi/mpi_wrappers.sh tests/mpi/mpi_openmpi.sh \
	tests/mpi/mpi_pmpi_symbols.sh
EXTRA_DIST += tests/mpi/testlist tests/mpi/mpi_rrt.sh tests/mpi/mpi_openmpi.sh \
	tests/mpi/mpi_wrappers.sh tests/mpi/mpi_pmpi_symbols.sh
CLEANFILES += tests/mpi/out/*.rrt tests/mpi/out/*.err tests/mpi/out/*.openmpi \
	tests/mpi/out/*.diff tests/mpi/out/openmpi/*

# The MPICH test suite (its programs, unmodified) against the MPI layer: several minutes on two
# cores, so not part of make check. Fetches the source with apt-get source (needs deb-src,
# dpkg-dev) into a cache; skips when it cannot.
EXTRA_DIST += tests/mpi/mpich_suite.sh tests/mpi/mpich_testlist
check-mpich: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) \
	  $(SHELL) $(abs_top_srcdir)/tests/mpi/mpich_suite.sh

# The OSU Micro-Benchmarks (their sources, unmodified; not shipped) against the MPI layer and,
# as the control, Open MPI: OSU_SRC=/path/to/osu-micro-benchmarks make check-osu. Skips without.
EXTRA_DIST += tests/mpi/osu_suite.sh
check-osu: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) \
	  $(SHELL) $(abs_top_srcdir)/tests/mpi/osu_suite.sh

# runtime/mpi: rrt's MPI subset (librrt_mpi), its header, the rrtmpicc/rrtmpicxx wrappers and
# the MPI test programs (tests/mpi).
lib_LTLIBRARIES += librrt_mpi.la
librrt_mpi_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/include/rrt/mpi
librrt_mpi_la_SOURCES = \
	runtime/mpi/state.h runtime/mpi/pmpi.h \
	runtime/mpi/typemap.h runtime/mpi/typemap.cc \
	runtime/mpi/stage.cc \
	runtime/mpi/errhandler.cc \
	runtime/mpi/init.cc \
	runtime/mpi/comm.cc \
	runtime/mpi/attr.cc \
	runtime/mpi/group.cc \
	runtime/mpi/datatype.cc \
	runtime/mpi/op.cc \
	runtime/mpi/request.cc \
	runtime/mpi/p2p.cc \
	runtime/mpi/coll.cc \
	runtime/mpi/topo.cc \
	runtime/mpi/neighbor.cc \
	runtime/mpi/info.cc \
	runtime/mpi/win.cc
librrt_mpi_la_LIBADD = librrt.la
librrt_mpi_la_LDFLAGS = -version-info 0:0:0

# Installed as <prefix>/include/rrt/mpi/mpi.h; the wrappers put that directory first.
rrtmpiincludedir = $(includedir)/rrt/mpi
rrtmpiinclude_HEADERS = include/rrt/mpi/mpi.h

bin_SCRIPTS += rrtmpicc rrtmpicxx
CLEANFILES += rrtmpicc rrtmpicxx
EXTRA_DIST += runtime/mpi/rrtmpicc.in
RRTMPI_WRAPPER_SED = sed -e 's|@includedir[@]|$(includedir)|g' -e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@version[@]|$(PACKAGE_VERSION)|g' -e 's|@sanlink[@]|$(SAN_WRAPPER_LDFLAGS)|g'
rrtmpicc: $(srcdir)/runtime/mpi/rrtmpicc.in Makefile
	$(AM_V_GEN)$(RRTMPI_WRAPPER_SED) -e 's|@compiler[@]|$(CC)|g' -e 's|@name[@]|rrtmpicc|g' \
	  $(srcdir)/runtime/mpi/rrtmpicc.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
rrtmpicxx: $(srcdir)/runtime/mpi/rrtmpicc.in Makefile
	$(AM_V_GEN)$(RRTMPI_WRAPPER_SED) -e 's|@compiler[@]|$(CXX)|g' -e 's|@name[@]|rrtmpicxx|g' \
	  $(srcdir)/runtime/mpi/rrtmpicc.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

include tests/mpi/local.mk

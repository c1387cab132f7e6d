# apps: targets of this folder (see the top-level Makefile.am)

# ---- microbenchmarks (OSU-style flags and output) -------------------------------------------
# apps/common/ holds what every benchmark shares; options, pt2pt_driver and coll_driver are plain
# C without runtime calls, so bench/compare builds the MPI counterparts (bench/mpi/) on them too.
apps_common_sources = apps/common/options.h apps/common/options.c \
	apps/common/device_mem.h apps/common/device_mem.c \
	apps/common/rrt_check.h apps/common/rrt_check.cc
apps_pt2pt_sources = $(apps_common_sources) \
	apps/common/pt2pt_driver.h apps/common/pt2pt_driver.c \
	apps/common/rrt_pt2pt_main.h apps/common/rrt_pt2pt_main.cc
apps_coll_sources = $(apps_common_sources) \
	apps/common/coll_driver.h apps/common/coll_driver.c \
	apps/common/rrt_coll_main.h apps/common/rrt_coll_main.cc

bin_PROGRAMS += apps/rrt_latency apps/rrt_bw apps/rrt_bibw
apps_rrt_latency_SOURCES = apps/rrt_latency.cc $(apps_pt2pt_sources)
apps_rrt_latency_LDADD = librrt.la
apps_rrt_bw_SOURCES = apps/rrt_bw.cc $(apps_pt2pt_sources)
apps_rrt_bw_LDADD = librrt.la
apps_rrt_bibw_SOURCES = apps/rrt_bibw.cc $(apps_pt2pt_sources)
apps_rrt_bibw_LDADD = librrt.la

# Collective benchmarks (osu_<name>-style): one main each over the shared collective driver.
bin_PROGRAMS += apps/rrt_barrier apps/rrt_bcast apps/rrt_reduce apps/rrt_allreduce apps/rrt_allgather apps/rrt_alltoall apps/rrt_reduce_scatter apps/rrt_gather apps/rrt_scatter
apps_rrt_barrier_SOURCES = apps/rrt_barrier.cc $(apps_coll_sources)
apps_rrt_barrier_LDADD = librrt.la
apps_rrt_bcast_SOURCES = apps/rrt_bcast.cc $(apps_coll_sources)
apps_rrt_bcast_LDADD = librrt.la
apps_rrt_reduce_SOURCES = apps/rrt_reduce.cc $(apps_coll_sources)
apps_rrt_reduce_LDADD = librrt.la
apps_rrt_allreduce_SOURCES = apps/rrt_allreduce.cc $(apps_coll_sources)
apps_rrt_allreduce_LDADD = librrt.la
apps_rrt_allgather_SOURCES = apps/rrt_allgather.cc $(apps_coll_sources)
apps_rrt_allgather_LDADD = librrt.la
apps_rrt_alltoall_SOURCES = apps/rrt_alltoall.cc $(apps_coll_sources)
apps_rrt_alltoall_LDADD = librrt.la
apps_rrt_reduce_scatter_SOURCES = apps/rrt_reduce_scatter.cc $(apps_coll_sources)
apps_rrt_reduce_scatter_LDADD = librrt.la
apps_rrt_gather_SOURCES = apps/rrt_gather.cc $(apps_coll_sources)
apps_rrt_gather_LDADD = librrt.la
apps_rrt_scatter_SOURCES = apps/rrt_scatter.cc $(apps_coll_sources)
apps_rrt_scatter_LDADD = librrt.la

# rrt_info: version, transports and their capabilities, tunables, protocol per size range.
bin_PROGRAMS += apps/rrt_info
apps_rrt_info_SOURCES = apps/rrt_info.cc
apps_rrt_info_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
apps_rrt_info_LDADD = librrtint.la

# ---- examples -----------------------------------------------------------------------------------
# Built in the tree for `rrun -n 4 apps/examples/ring`; their sources are installed for users to
# build with rrtcc.
noinst_PROGRAMS += apps/examples/hello apps/examples/ring
apps_examples_hello_SOURCES = apps/examples/hello.c
apps_examples_hello_LDADD = librrt.la
apps_examples_ring_SOURCES = apps/examples/ring.c
apps_examples_ring_LDADD = librrt.la
rrtexamplesdir = $(pkgdatadir)/examples
rrtexamples_DATA = apps/examples/hello.c apps/examples/ring.c

# ---- compiler wrappers --------------------------------------------------------------------------
# Generated at make time (configure.ac stays as it is) from one template, with the configured
# directories; `make install DESTDIR=...` and moved trees are handled inside the script.
bin_SCRIPTS += apps/rrtcc apps/rrtcxx
CLEANFILES += apps/rrtcc apps/rrtcxx
EXTRA_DIST += apps/wrapper.in
apps_wrapper_edit = sed -e 's|@prefix[@]|$(prefix)|g' -e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@includedir[@]|$(includedir)|g' -e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@SANLINK[@]|$(SAN_WRAPPER_LDFLAGS)|g'

apps/rrtcc: $(srcdir)/apps/wrapper.in Makefile
	$(AM_V_GEN)$(MKDIR_P) apps && $(apps_wrapper_edit) -e 's|@NAME[@]|rrtcc|g' \
	  -e 's|@COMPILER[@]|$(CC)|g' -e 's|@ENVVAR[@]|RRT_CC|g' -e 's|@STD[@]||g' $(srcdir)/apps/wrapper.in >$@.tmp && \
	  chmod +x $@.tmp && mv -f $@.tmp $@
apps/rrtcxx: $(srcdir)/apps/wrapper.in Makefile
	$(AM_V_GEN)$(MKDIR_P) apps && $(apps_wrapper_edit) -e 's|@NAME[@]|rrtcxx|g' \
	  -e 's|@COMPILER[@]|$(CXX)|g' -e 's|@ENVVAR[@]|RRT_CXX|g' -e 's|@STD[@]|-std=gnu++17|g' \
	  $(srcdir)/apps/wrapper.in >$@.tmp && \
	  chmod +x $@.tmp && mv -f $@.tmp $@

TESTS += apps/test_wrappers.sh
EXTRA_DIST += apps/test_wrappers.sh

# ---- bench/: the comparison with Open MPI and MPICH (run by hand, never by make check) ----------
EXTRA_DIST += bench/compare bench/mpi

# ---- soak test ----------------------------------------------------------------------------------
# rrt_stress: random traffic and collectives with checked payloads (tests/soak/ runs it briefly
# in make check; `rrun -n 4 apps/rrt_stress --minutes 60` for long runs).
bin_PROGRAMS += apps/rrt_stress
apps_rrt_stress_SOURCES = apps/rrt_stress.cc
apps_rrt_stress_LDADD = librrt.la

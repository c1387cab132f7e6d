# runtime/coll: collective algorithms (one per file), selection table, reduction kernels.
# The kernels are a separate convenience library so that they alone get the vectoriser at full
# strength (-O2 of GCC 12 only vectorises with the "very cheap" cost model; VECT_FLAGS, from
# configure, is empty for clang). Check with
#   make V=1 CXXFLAGS+=-fopt-info-vec-optimized runtime/coll/librrtcollkern_la-kernels.lo
# On x86-64 the same loops are built a second time for AVX2 + F16C (kernels_avx2.cc), chosen
# at run time.
noinst_LTLIBRARIES += librrtcollkern.la
librrtcollkern_la_SOURCES = runtime/coll/kernels.cc
librrtcollkern_la_CPPFLAGS = $(AM_CPPFLAGS)
librrtcollkern_la_CXXFLAGS = $(AM_CXXFLAGS) $(RRT_HIDDEN) $(VECT_FLAGS)
librrtint_la_LIBADD += librrtcollkern.la
librrtcollkern_la_SOURCES += runtime/coll/kernel_loops.h
if HAVE_AVX2_KERNELS
noinst_LTLIBRARIES += librrtcollkernavx2.la
librrtcollkernavx2_la_SOURCES = runtime/coll/kernels_avx2.cc
librrtcollkernavx2_la_CPPFLAGS = $(AM_CPPFLAGS)
librrtcollkernavx2_la_CXXFLAGS = $(AM_CXXFLAGS) $(RRT_HIDDEN) $(VECT_FLAGS) -mavx2 -mf16c
librrtint_la_LIBADD += librrtcollkernavx2.la
endif

librrtint_la_SOURCES += \
	runtime/coll/coll.h runtime/coll/task.h runtime/coll/engine.cc runtime/coll/ctx_agree.h runtime/coll/ctx_agree.cc \
	runtime/coll/direct.h runtime/coll/direct.cc \
	runtime/coll/neighbor_exchange.h runtime/coll/neighbor_exchange.cc \
	runtime/coll/scratch_cache.h runtime/coll/scratch_cache.cc \
	runtime/coll/vector_pool.h runtime/coll/vector_pool.cc \
	runtime/coll/op.h runtime/coll/op.cc \
	runtime/coll/patterns.h runtime/coll/blocks.h \
	runtime/coll/node_layout.h runtime/coll/node_layout.cc \
	runtime/coll/selection.h runtime/coll/selection.cc runtime/coll/algorithms.h \
	runtime/coll/bind_proto.cc \
	runtime/coll/barrier_dissemination.cc \
	runtime/coll/barrier_linear.cc runtime/coll/barrier_shm.cc \
	runtime/coll/bcast_binomial.cc runtime/coll/bcast_linear.cc runtime/coll/bcast_shm.cc \
	runtime/coll/bcast_scatter_allgather.cc \
	runtime/coll/bcast_chain.cc runtime/coll/bcast_hierarchical.cc \
	runtime/coll/reduce_binomial.cc runtime/coll/reduce_linear.cc runtime/coll/reduce_rabenseifner.cc \
	runtime/coll/allreduce_recursive_doubling.cc runtime/coll/allreduce_rabenseifner.cc \
	runtime/coll/ring_pipeline.h runtime/coll/ring_pipeline.cc runtime/coll/allreduce_ring.cc \
	runtime/coll/allreduce_hierarchical.cc \
	runtime/coll/node_segment.h runtime/coll/node_segment.cc \
	runtime/coll/shm_reduction.h runtime/coll/shm_reduction.cc \
	runtime/coll/shm_exchange.h runtime/coll/shm_flat_reduction.cc \
	runtime/coll/allreduce_shm.cc runtime/coll/reduce_shm.cc runtime/coll/reduce_scatter_shm.cc \
	runtime/coll/allgather_recursive_doubling.cc runtime/coll/allgather_bruck.cc \
	runtime/coll/allgather_ring.cc \
	runtime/coll/allgather_scattered.cc runtime/coll/allgather_shm.cc \
	runtime/coll/alltoall_bruck.cc runtime/coll/alltoall_pairwise.cc \
	runtime/coll/alltoall_scattered.cc runtime/coll/alltoall_shm.cc \
	runtime/coll/alltoallv_pairwise.cc runtime/coll/alltoallv_scattered.cc \
	runtime/coll/gather_binomial.cc runtime/coll/gatherv_linear.cc \
	runtime/coll/scatter_binomial.cc runtime/coll/scatterv_linear.cc \
	runtime/coll/reduce_scatter_recursive_halving.cc runtime/coll/reduce_scatter_ring.cc \
	runtime/coll/reduce_scatter_reduce_scatterv.cc \
	runtime/coll/scan_recursive_doubling.cc runtime/coll/exscan_recursive_doubling.cc \
	runtime/api/coll_api.cc

EXTRA_DIST += runtime/coll/tuning/shm-2vcpu.txt

# Unit tests: kernels, peer arithmetic, selection, and every algorithm at 1..16 ranks inside one
# process over an in-memory p2p (tests/unit/coll_sim.h).
check_PROGRAMS += tests/unit/coll_test
TESTS += tests/unit/coll_test
tests_unit_coll_test_SOURCES = tests/unit/coll_sim.h tests/unit/coll_sim.cc \
	tests/unit/coll_kernels_test.cc tests/unit/coll_patterns_test.cc tests/unit/coll_neighbor_test.cc \
	tests/unit/coll_selection_test.cc tests/unit/coll_algorithms_test.cc \
	tests/unit/coll_scratch_test.cc tests/unit/coll_vector_pool_test.cc
tests_unit_coll_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_coll_test_LDADD = $(UNIT_LDADD)

include tests/coll/local.mk

# runtime/gpu: CUDA loaded at run time (dlopen), memory-type and IPC caches, staging pipeline,
# GPU protocol selection, and the device reduction kernels (nvcc, when the toolkit is present).
librrtint_la_SOURCES += \
	runtime/memory/mem_type_cache.h runtime/memory/mem_type_cache.cc \
	runtime/gpu/driver.h \
	runtime/gpu/gpu.h runtime/gpu/gpu.cc \
	runtime/gpu/pipeline.h runtime/gpu/pipeline.cc \
	runtime/gpu/ipc_cache.h runtime/gpu/ipc_cache.cc \
	runtime/gpu/protocol.h runtime/gpu/protocol.cc \
	runtime/gpu/rndv.h runtime/gpu/rndv.cc \
	runtime/coll/device_stage.h runtime/coll/device_stage.cc
EXTRA_DIST += runtime/gpu/kernels.cu runtime/gpu/cuda_driver.h runtime/gpu/cuda_driver.cc

if HAVE_CUDA
# The kernels: one fatbin with SASS for Ampere (sm_80) and Hopper (sm_90) and PTX for Turing
# (compute_75) that newer GPUs JIT-compile; embedded as a byte array (bin2c) and loaded through
# the dlopen'ed driver, so the library links neither libcuda nor libcudart.
NVCC_GENCODE = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_75,code=compute_75
BIN2C = $(dir $(NVCC))bin2c
librrtint_la_SOURCES += runtime/gpu/cuda_driver.h runtime/gpu/cuda_driver.cc
nodist_librrtint_la_SOURCES = runtime/gpu/kernels_fatbin.c
librrtint_la_CPPFLAGS += -DRRT_HAVE_CUDA_KERNELS
librrtint_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
runtime/gpu/kernels.fatbin: $(srcdir)/runtime/gpu/kernels.cu
	@$(MKDIR_P) runtime/gpu
	$(AM_V_GEN)$(NVCC) --fatbin -O3 $(NVCC_GENCODE) -o $@ $(srcdir)/runtime/gpu/kernels.cu
runtime/gpu/kernels_fatbin.c: runtime/gpu/kernels.fatbin
	$(AM_V_GEN)$(BIN2C) --const --name rrt_gpu_fatbin runtime/gpu/kernels.fatbin | \
	  sed 's/^const unsigned char rrt_gpu_fatbin/const unsigned char __attribute__((aligned(8))) rrt_gpu_fatbin/' > $@.tmp && \
	  grep -q 'aligned(8)' $@.tmp && mv $@.tmp $@
CLEANFILES += runtime/gpu/kernels.fatbin runtime/gpu/kernels_fatbin.c
endif

# Unit tests of the host-side logic against a test double of the driver (no GPU needed).
check_PROGRAMS += tests/unit/gpu_test
TESTS += tests/unit/gpu_test
tests_unit_gpu_test_SOURCES = tests/unit/gpu_fake_driver.h tests/unit/gpu_fake_driver.cc \
	tests/unit/gpu_cache_test.cc tests/unit/gpu_pipeline_test.cc tests/unit/gpu_staging_test.cc
tests_unit_gpu_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_gpu_test_LDADD = $(UNIT_LDADD)
# The device-buffer rendezvous (IPC, pipeline) through the protocol engine, rank 0 of two.
check_PROGRAMS += tests/unit/gpu_rndv_test
TESTS += tests/unit/gpu_rndv_test
tests_unit_gpu_rndv_test_SOURCES = tests/unit/gpu_fake_driver.h tests/unit/gpu_fake_driver.cc \
	tests/unit/gpu_rndv_test.cc
tests_unit_gpu_rndv_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_gpu_rndv_test_LDADD = $(UNIT_LDADD)
# Allreduce / reduce on device buffers running on the device (coll_sim ranks, the double).
check_PROGRAMS += tests/unit/gpu_coll_test
TESTS += tests/unit/gpu_coll_test
tests_unit_gpu_coll_test_SOURCES = tests/unit/gpu_fake_driver.h tests/unit/gpu_fake_driver.cc \
	tests/unit/coll_sim.h tests/unit/coll_sim.cc tests/unit/gpu_coll_test.cc
tests_unit_gpu_coll_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_gpu_coll_test_LDADD = $(UNIT_LDADD)

# The GPU suite (multi-process, through rrun): skips with its reason when no device is present.
check_PROGRAMS += tests/gpu/gpu_p2p tests/gpu/gpu_coll tests/gpu/gpu_kernels
tests_gpu_gpu_p2p_SOURCES = tests/gpu/gpu_p2p.c apps/common/device_mem.h apps/common/device_mem.c
tests_gpu_gpu_p2p_LDADD = librrt.la
tests_gpu_gpu_p2p_LDFLAGS = $(AM_LDFLAGS) -no-install
tests_gpu_gpu_coll_SOURCES = tests/gpu/gpu_coll.c apps/common/device_mem.h apps/common/device_mem.c
tests_gpu_gpu_coll_LDADD = librrt.la
tests_gpu_gpu_coll_LDFLAGS = $(AM_LDFLAGS) -no-install
tests_gpu_gpu_kernels_SOURCES = tests/gpu/gpu_kernels.cc apps/common/device_mem.h apps/common/device_mem.c
tests_gpu_gpu_kernels_LDADD = librrtint.la
TESTS += tests/gpu/gpu_suite.sh
EXTRA_DIST += tests/gpu/gpu_suite.sh tests/gpu/run_gpu_suite.sh

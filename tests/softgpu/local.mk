# tests/softgpu: the software GPU, a user-space stand-in for the CUDA driver (libcuda.so.1),
# never installed. Built with the toolkit's cuda.h (the driver API's types and versioned names)
# by an explicit rule, like tests/softrdma, for the exact soname; programs bind to it through
#   LD_LIBRARY_PATH=$(top_builddir)/tests/softgpu/lib   (rrt dlopens libcuda.so.1)
if HAVE_CUDA
SOFTGPU_LIB = tests/softgpu/lib/libcuda.so.1
# No $(SAN_FLAGS): it is loaded into whatever program opens the driver.
$(SOFTGPU_LIB): $(top_srcdir)/tests/softgpu/softgpu.cc
	$(AM_V_CXXLD)$(MKDIR_P) tests/softgpu/lib && $(CXX) -std=gnu++17 -fPIC -O2 -g -Wall -Wextra \
	  -Wno-unused-parameter $(CUDA_CPPFLAGS) -shared -o $@ $< -Wl,-soname,libcuda.so.1 \
	  -Wl,--no-undefined -lpthread

# The GPU suite's programs over it (and, with the verbs transport, over the software RDMA device
# for GPUDirect RDMA). Building tests/gpu/gpu_p2p builds the library first.
EXTRA_tests_gpu_gpu_p2p_DEPENDENCIES = $(SOFTGPU_LIB)
TESTS += tests/softgpu/gpu_soft.sh
CLEANFILES += $(SOFTGPU_LIB)
endif HAVE_CUDA
EXTRA_DIST += tests/softgpu/softgpu.cc tests/softgpu/gpu_soft.sh tests/softgpu/README.md

# tests/softrdma: a user-space stand-in for libibverbs (the "software RDMA device"), never
# installed. It is built by an explicit rule, not libtool, because it must carry the exact soname
# libibverbs.so.1 and Debian's symbol versions; verbs programs bind to it through
#   LD_LIBRARY_PATH=$(top_builddir)/tests/softrdma/lib   (see tests/softrdma/env.sh)
SOFTRDMA_CXX_FILES = \
	tests/softrdma/cma.cc \
	tests/softrdma/cq.cc \
	tests/softrdma/die.cc \
	tests/softrdma/engine.cc \
	tests/softrdma/pin_check.cc \
	tests/softrdma/fault.cc \
	tests/softrdma/qp_state.cc \
	tests/softrdma/registry.cc \
	tests/softrdma/requester.cc \
	tests/softrdma/responder.cc \
	tests/softrdma/strings.cc \
	tests/softrdma/unimplemented.cc \
	tests/softrdma/verbs_device.cc \
	tests/softrdma/verbs_memory.cc \
	tests/softrdma/verbs_queues.cc
SOFTRDMA_H_FILES = \
	tests/softrdma/cma.h \
	tests/softrdma/cq.h \
	tests/softrdma/device_caps.h \
	tests/softrdma/die.h \
	tests/softrdma/engine.h \
	tests/softrdma/objects.h \
	tests/softrdma/pin_check.h \
	tests/softrdma/fault.h \
	tests/softrdma/qp_state.h \
	tests/softrdma/registry.h \
	tests/softrdma/requester.h \
	tests/softrdma/responder.h \
	tests/softrdma/verbs_ops.h \
	tests/softrdma/wire.h
if HAVE_VERBS

SOFTRDMA_OBJECTS = $(SOFTRDMA_CXX_FILES:.cc=.softrdma.o)
SOFTRDMA_LIB = tests/softrdma/lib/libibverbs.so.1
# No $(SAN_FLAGS): the library is loaded into uninstrumented programs (ibv_rc_pingpong).
SOFTRDMA_CXXFLAGS = -std=gnu++17 -fPIC -O2 -g -Wall -Wextra -Wno-unused-parameter \
	-I$(top_srcdir) -I$(top_builddir)

tests/softrdma/%.softrdma.o: $(top_srcdir)/tests/softrdma/%.cc $(addprefix $(top_srcdir)/,$(SOFTRDMA_H_FILES))
	$(AM_V_CXX)$(MKDIR_P) tests/softrdma && $(CXX) $(SOFTRDMA_CXXFLAGS) -c -o $@ $<

$(SOFTRDMA_LIB): $(SOFTRDMA_OBJECTS) $(top_srcdir)/tests/softrdma/libibverbs.map
	$(AM_V_CXXLD)$(MKDIR_P) tests/softrdma/lib && $(CXX) -shared -fPIC -o $@ $(SOFTRDMA_OBJECTS) \
	  -Wl,-soname,libibverbs.so.1 -Wl,--version-script=$(top_srcdir)/tests/softrdma/libibverbs.map \
	  -Wl,--no-undefined -lpthread

# The library's own test: two processes over the emulated device (run by softrdma_test.sh).
check_PROGRAMS += tests/softrdma/softrdma_test
tests_softrdma_softrdma_test_SOURCES = tests/softrdma/softrdma_test.cc
tests_softrdma_softrdma_test_LDADD = -libverbs -lpthread
# Building the test binary builds the library, so `make check` has it before any test runs.
EXTRA_tests_softrdma_softrdma_test_DEPENDENCIES = $(SOFTRDMA_LIB)

TESTS += \
	tests/softrdma/softrdma_test.sh \
	tests/softrdma/rc_pingpong_test.sh \
	tests/softrdma/verbs_tools_test.sh \
	tests/softrdma/verbs_p2p.sh \
	tests/softrdma/verbs_coll.sh \
	tests/softrdma/verbs_wait.sh

CLEANFILES += $(SOFTRDMA_LIB) $(SOFTRDMA_OBJECTS)

# Build only this folder: make softrdma
.PHONY: softrdma
softrdma: $(SOFTRDMA_LIB) tests/softrdma/softrdma_test$(EXEEXT)

endif HAVE_VERBS

EXTRA_DIST += $(SOFTRDMA_CXX_FILES) $(SOFTRDMA_H_FILES) \
	tests/softrdma/libibverbs.map \
	tests/softrdma/env.sh \
	tests/softrdma/softrdma_test.sh \
	tests/softrdma/rc_pingpong_test.sh \
	tests/softrdma/verbs_tools_test.sh \
	tests/softrdma/verbs_p2p.sh \
	tests/softrdma/verbs_coll.sh \
	tests/softrdma/verbs_wait.sh \
	tests/mp/testlist.verbs \
	tests/coll/testlist.verbs \
	tests/softrdma/README.md

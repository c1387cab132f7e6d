# runtime/transport/shm: targets of this folder (see the top-level Makefile.am)
librrtint_la_SOURCES += \
	runtime/transport/shm/ring.h \
	runtime/transport/shm/segment.h runtime/transport/shm/segment.cc \
	runtime/transport/shm/cma.h runtime/transport/shm/cma.cc runtime/transport/shm/cma_split.h \
	runtime/transport/shm/copy_path.h runtime/transport/shm/copy_path.cc \
	runtime/transport/shm/address.h \
	runtime/transport/shm/shm_transport.h runtime/transport/shm/shm_transport.cc

check_PROGRAMS += tests/unit/shm_test
TESTS += tests/unit/shm_test
tests_unit_shm_test_SOURCES = \
	tests/unit/shm_ring_test.cc \
	tests/unit/shm_transport_test.cc
tests_unit_shm_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_shm_test_LDADD = $(UNIT_LDADD)

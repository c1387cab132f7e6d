# runtime/transport/verbs: the RDMA verbs transport (built when configure found rdma-core).
# Only librrt links libibverbs ($(VERBS_LIBS)); tests run it over tests/softrdma.
if HAVE_VERBS
librrtint_la_SOURCES += \
	runtime/transport/verbs/address.h runtime/transport/verbs/address.cc \
	runtime/transport/verbs/device.h runtime/transport/verbs/device.cc \
	runtime/transport/verbs/qp.h runtime/transport/verbs/qp.cc \
	runtime/transport/verbs/bounce_pool.h runtime/transport/verbs/bounce_pool.cc \
	runtime/transport/verbs/eager_classes.h runtime/transport/verbs/eager_classes.cc \
	runtime/transport/verbs/mr.h runtime/transport/verbs/gdr.h runtime/transport/verbs/gdr.cc \
	runtime/transport/verbs/verbs_transport.h runtime/transport/verbs/verbs_transport.cc
librrtint_la_LIBADD += $(VERBS_LIBS)
if HAVE_RDMACM
librrtint_la_SOURCES += runtime/transport/verbs/rdmacm.h runtime/transport/verbs/rdmacm.cc
endif HAVE_RDMACM
endif HAVE_VERBS

# The transport's unit test runs over the software RDMA device (tests/softrdma/verbs_unit.sh).
if HAVE_VERBS
check_PROGRAMS += tests/unit/verbs_test
tests_unit_verbs_test_SOURCES = tests/unit/verbs_transport_test.cc tests/unit/gpu_fake_driver.cc
tests_unit_verbs_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_verbs_test_LDADD = $(UNIT_LDADD)
EXTRA_tests_unit_verbs_test_DEPENDENCIES = $(SOFTRDMA_LIB)
TESTS += tests/softrdma/verbs_unit.sh
endif HAVE_VERBS
EXTRA_DIST += tests/softrdma/verbs_unit.sh

# The verbs eager size classes: parsing and the sender's choice, no device needed.
if HAVE_VERBS
check_PROGRAMS += tests/unit/verbs_eager_classes_test
tests_unit_verbs_eager_classes_test_SOURCES = tests/unit/verbs_eager_classes_test.cc
tests_unit_verbs_eager_classes_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_verbs_eager_classes_test_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/verbs_eager_classes_test
endif HAVE_VERBS

# The verbs wire formats (address blob v3, rdma_cm private data): pure parsing, no device needed.
if HAVE_VERBS
check_PROGRAMS += tests/unit/verbs_address_test
tests_unit_verbs_address_test_SOURCES = tests/unit/verbs_address_test.cc
tests_unit_verbs_address_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_verbs_address_test_LDADD = $(UNIT_LDADD)
TESTS += tests/unit/verbs_address_test
endif HAVE_VERBS

# runtime/transport/tcp: targets of this folder (see the top-level Makefile.am)
librrtint_la_SOURCES += \
	runtime/transport/tcp/frame.h \
	runtime/transport/tcp/address.h \
	runtime/transport/tcp/interfaces.h runtime/transport/tcp/interfaces.cc \
	runtime/transport/tcp/tcp_transport.h runtime/transport/tcp/tcp_transport.cc

check_PROGRAMS += tests/unit/tcp_test
TESTS += tests/unit/tcp_test
tests_unit_tcp_test_SOURCES = tests/unit/tcp_transport_test.cc
tests_unit_tcp_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_tcp_test_LDADD = $(UNIT_LDADD)

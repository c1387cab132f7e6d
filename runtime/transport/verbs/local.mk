# runtime/transport/verbs: the RDMA verbs transport (built when configure found rdma-core).
# Only librrt links libibverbs ($(VERBS_LIBS)); tests run it over tests/softrdma.
if HAVE_VERBS
librrtint_la_SOURCES += \
	runtime/transport/verbs/address.h \
	runtime/transport/verbs/device.h runtime/transport/verbs/device.cc \
	runtime/transport/verbs/qp.h runtime/transport/verbs/qp.cc \
	runtime/transport/verbs/bounce_pool.h runtime/transport/verbs/bounce_pool.cc \
	runtime/transport/verbs/verbs_transport.h runtime/transport/verbs/verbs_transport.cc
librrtint_la_LIBADD += $(VERBS_LIBS)
endif HAVE_VERBS

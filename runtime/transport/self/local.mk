librrtint_la_SOURCES += runtime/transport/self/self_transport.h runtime/transport/self/self_transport.cc

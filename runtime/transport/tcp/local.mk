# runtime/transport/tcp: targets of this folder (see the top-level Makefile.am)
librrtint_la_SOURCES += \
	runtime/transport/tcp/frame.h \
	runtime/transport/tcp/address.h \
	runtime/transport/tcp/interfaces.h runtime/transport/tcp/interfaces.cc \
	runtime/transport/tcp/tcp_transport.h runtime/transport/tcp/tcp_transport.cc

librrtint_la_SOURCES += \
	runtime/proto/wire.h \
	runtime/proto/comm.h runtime/proto/comm.cc \
	runtime/proto/matching.h runtime/proto/matching.cc \
	runtime/proto/request_ids.h runtime/proto/request_ids.cc \
	runtime/proto/engine.h runtime/proto/engine.cc \
	runtime/proto/send.cc runtime/proto/recv.cc runtime/proto/cancel.cc runtime/proto/device_rndv.cc \
	runtime/proto/p2p.h runtime/proto/p2p.cc

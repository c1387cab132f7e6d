# runtime/rma: one-sided communication (windows) over the point-to-point engine.
librrtint_la_SOURCES += \
	runtime/rma/window.h runtime/rma/window.cc \
	runtime/rma/origin.cc runtime/rma/direct.cc runtime/rma/target.cc runtime/rma/sync.cc \
	runtime/rma/shared.cc

librrtint_la_SOURCES += \
	runtime/api/api_check.h runtime/api/api_check.cc runtime/api/runtime_state.h \
	runtime/api/env_api.cc runtime/api/comm_api.cc runtime/api/p2p_api.cc \
	runtime/api/request_api.cc runtime/api/rma_api.cc runtime/api/mem_api.cc

# Unit tests of the core and the protocol layer (the transports and collectives have their own).
check_PROGRAMS += tests/unit/core_test
TESTS += tests/unit/core_test
tests_unit_core_test_SOURCES = \
	tests/unit/config_test.cc \
	tests/unit/matching_test.cc \
	tests/unit/wire_test.cc \
	tests/unit/request_test.cc \
	tests/unit/small_copy_test.cc \
	tests/unit/datatype_test.cc
tests_unit_core_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_core_test_LDADD = $(UNIT_LDADD)

# A rendezvous whose one-sided transfer fails: the engine as rank 0 against a scripted rank 1.
check_PROGRAMS += tests/unit/rndv_error_test
TESTS += tests/unit/rndv_error_test
tests_unit_rndv_error_test_SOURCES = tests/unit/rndv_error_test.cc tests/unit/engine_harness.h
tests_unit_rndv_error_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_rndv_error_test_LDADD = $(UNIT_LDADD)

# The registration cache, the memory-release hooks and rrt_alloc_mem's memory (runtime/memory).
check_PROGRAMS += tests/unit/memory_test
TESTS += tests/unit/memory_test
tests_unit_memory_test_SOURCES = tests/unit/reg_cache_test.cc tests/unit/device_reg_cache_test.cc \
	tests/unit/shared_alloc_test.cc
tests_unit_memory_test_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_memory_test_LDADD = $(UNIT_LDADD)

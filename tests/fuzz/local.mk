# tests/fuzz: fuzz targets for everything that parses bytes from another process or the user
# (see fuzz_target.h). Each target is built as a plain program that replays its corpus
# (tests/fuzz/corpus/<target>/: seeds and the inputs of crashes found) in make check, and, with
# --enable-fuzzing (clang), as a libFuzzer program that tests/fuzz/run_fuzzers.sh runs for a
# bounded time.
# The scripts take the list of targets from the folders of tests/fuzz/corpus/ (fuzz_verbs_* only
# where the build has verbs, run over the software RDMA device).
FUZZ_TARGETS = tests/fuzz/fuzz_engine_am tests/fuzz/fuzz_shm_ring tests/fuzz/fuzz_shm_connect \
	tests/fuzz/fuzz_config tests/fuzz/fuzz_rrun_options tests/fuzz/fuzz_tcp_stream \
	tests/fuzz/fuzz_tcp_address tests/fuzz/fuzz_rma_target
if HAVE_VERBS
FUZZ_TARGETS += tests/fuzz/fuzz_verbs_address
endif
check_PROGRAMS += $(FUZZ_TARGETS)
if HAVE_FUZZING
FUZZ_MAIN =
FUZZ_LINK = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
else
FUZZ_MAIN = tests/fuzz/replay_main.cc
FUZZ_LINK = $(AM_LDFLAGS)
endif
FUZZ_COMMON = tests/fuzz/fuzz_target.h $(FUZZ_MAIN)

tests_fuzz_fuzz_engine_am_SOURCES = tests/fuzz/fuzz_engine_am.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_engine_am_LDADD = librrtint.la
tests_fuzz_fuzz_engine_am_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_shm_ring_SOURCES = tests/fuzz/fuzz_shm_ring.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_shm_ring_LDADD = librrtint.la
tests_fuzz_fuzz_shm_ring_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_shm_connect_SOURCES = tests/fuzz/fuzz_shm_connect.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_shm_connect_LDADD = librrtint.la
tests_fuzz_fuzz_shm_connect_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_config_SOURCES = tests/fuzz/fuzz_config.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_config_LDADD = librrtint.la
tests_fuzz_fuzz_config_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_rrun_options_SOURCES = tests/fuzz/fuzz_rrun_options.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_rrun_options_LDADD = launcher/librrun.la
tests_fuzz_fuzz_rrun_options_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_tcp_stream_SOURCES = tests/fuzz/fuzz_tcp_stream.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_tcp_stream_LDADD = librrtint.la
tests_fuzz_fuzz_tcp_stream_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_tcp_address_SOURCES = tests/fuzz/fuzz_tcp_address.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_tcp_address_LDADD = librrtint.la
tests_fuzz_fuzz_tcp_address_LDFLAGS = $(FUZZ_LINK)
tests_fuzz_fuzz_rma_target_SOURCES = tests/fuzz/fuzz_rma_target.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_rma_target_LDADD = librrtint.la
tests_fuzz_fuzz_rma_target_LDFLAGS = $(FUZZ_LINK)
if HAVE_VERBS
tests_fuzz_fuzz_verbs_address_SOURCES = tests/fuzz/fuzz_verbs_address.cc $(FUZZ_COMMON)
tests_fuzz_fuzz_verbs_address_LDADD = librrtint.la
tests_fuzz_fuzz_verbs_address_LDFLAGS = $(FUZZ_LINK)
# Runs over the software RDMA device, which make check builds first.
EXTRA_tests_fuzz_fuzz_verbs_address_DEPENDENCIES = $(SOFTRDMA_LIB)
endif

TESTS += tests/fuzz/fuzz_replay.sh
EXTRA_DIST += tests/fuzz/fuzz_replay.sh tests/fuzz/run_fuzzers.sh tests/fuzz/corpus

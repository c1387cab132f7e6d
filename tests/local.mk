# Tests. Unit tests are GoogleTest binaries linked against librrtint.la (one binary per area,
# defined in the area's own fragment); multi-process suites run through rrun.
UNIT_CPPFLAGS = $(AM_CPPFLAGS) $(GTEST_CPPFLAGS)
UNIT_LDADD = librrtint.la $(GTEST_LIBS) -lgtest_main
# Test scripts see the build tree through these.
AM_TESTS_ENVIRONMENT = top_builddir='$(abs_top_builddir)'; top_srcdir='$(abs_top_srcdir)'; \
	export top_builddir top_srcdir;

include tests/unit/local.mk
include tests/mp/local.mk
include tests/launcher/local.mk
include tests/softrdma/local.mk
include tests/softgpu/local.mk
include tests/softroce/local.mk
include tests/fuzz/local.mk
include tests/soak/local.mk
include tests/fault/local.mk
include tests/multihost/local.mk
include tests/steady/local.mk

# Sanitizer builds: any report fails the test it happens in; leaks inside third-party
# libraries are suppressed (tests/sanitizers/lsan.supp justifies each entry).
if HAVE_SANITIZERS
AM_TESTS_ENVIRONMENT += \
	ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:$${ASAN_OPTIONS:-}"; \
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:$${UBSAN_OPTIONS:-}"; \
	LSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/sanitizers/lsan.supp:print_suppressions=0:$${LSAN_OPTIONS:-}"; \
	TSAN_OPTIONS="suppressions=$(abs_top_srcdir)/tests/sanitizers/tsan.supp:$${TSAN_OPTIONS:-}"; \
	RRT_SAN_LDFLAGS='$(SAN_WRAPPER_LDFLAGS)'; \
	export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS RRT_SAN_LDFLAGS;
endif
EXTRA_DIST += tests/sanitizers/lsan.supp tests/sanitizers/tsan.supp

# Every test of this build, one per line: .ci/run's sanitizer pass runs this list less the few
# it leaves out, so a new test joins that pass without anyone adding it there.
print-tests:
	@for t in $(TESTS); do echo "$$t"; done

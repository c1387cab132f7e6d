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
include tests/softroce/local.mk

# tests/launcher: rrun tests (see tests/local.mk). probe is a plain PMIx client (no librrt) that
# the scripts drive through options; launcher_unit tests the launcher's pure parts.
check_PROGRAMS += tests/launcher/probe tests/launcher/launcher_unit
tests_launcher_probe_SOURCES = tests/launcher/probe.c
tests_launcher_probe_LDADD = $(PMIX_LIBS)

tests_launcher_launcher_unit_SOURCES = tests/launcher/launcher_unit_test.cc
tests_launcher_launcher_unit_CPPFLAGS = $(AM_CPPFLAGS) $(GTEST_CPPFLAGS)
tests_launcher_launcher_unit_LDADD = launcher/librrun.la $(PMIX_LIBS) $(GTEST_LIBS) -lgtest_main

LAUNCHER_TESTS = \
	tests/launcher/rrun_basic.sh \
	tests/launcher/rrun_exit.sh \
	tests/launcher/rrun_signals.sh \
	tests/launcher/rrun_io.sh \
	tests/launcher/rrun_cleanup.sh \
	tests/launcher/rrun_args.sh \
	tests/launcher/rrun_env.sh
TESTS += tests/launcher/launcher_unit $(LAUNCHER_TESTS)
EXTRA_DIST += $(LAUNCHER_TESTS) tests/launcher/lib.sh

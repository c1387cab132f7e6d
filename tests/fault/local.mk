# tests/fault: rrt jobs that end badly (fault_suite.sh drives fault_app through rrun).
check_PROGRAMS += tests/fault/fault_app
tests_fault_fault_app_SOURCES = tests/fault/fault_app.c
tests_fault_fault_app_LDADD = librrt.la
tests_fault_fault_app_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/fault/fault_suite.sh
EXTRA_DIST += tests/fault/fault_suite.sh

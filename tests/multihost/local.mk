# tests/multihost: rrt jobs across two hosts made of network namespaces on this machine, started
# by Open MPI's mpirun and by a private Slurm cluster's srun (root only; skipped elsewhere).
# netns.sh and slurm.sh document the set-up.
check_PROGRAMS += tests/multihost/mh_kill_app
tests_multihost_mh_kill_app_SOURCES = tests/multihost/mh_kill_app.c
tests_multihost_mh_kill_app_LDADD = librrt.la
tests_multihost_mh_kill_app_LDFLAGS = $(AM_LDFLAGS) -no-install
TESTS += tests/multihost/mh_suite.sh tests/multihost/mh_kill_host.sh tests/multihost/mh_slurm.sh \
	tests/multihost/mh_rrun.sh
EXTRA_DIST += tests/multihost/mh_suite.sh tests/multihost/mh_kill_host.sh \
	tests/multihost/mh_slurm.sh tests/multihost/mh_rrun.sh tests/multihost/slurm.sh tests/multihost/mh_stats.py \
	tests/multihost/netns.sh tests/multihost/ns_agent.sh tests/multihost/ns_mpirun.sh \
	tests/multihost/testlist

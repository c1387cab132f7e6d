# launcher: rrun, the PMIx-server launcher (see launcher/local_job.h for the job life cycle).
# Everything except main.cc goes into a convenience library that the launcher's unit tests link.
noinst_LTLIBRARIES += launcher/librrun.la
launcher_librrun_la_SOURCES = \
	launcher/options.h launcher/options.cc \
	launcher/exec_path.h launcher/exec_path.cc \
	launcher/host_list.h launcher/host_list.cc \
	launcher/delegation.h launcher/delegation.cc \
	launcher/rank_env.h launcher/rank_env.cc \
	launcher/job_map.h launcher/job_map.cc \
	launcher/job_files.h launcher/job_files.cc \
	launcher/job_secret.h launcher/job_secret.cc \
	launcher/rank_fate.h launcher/rank_fate.cc \
	launcher/upcall_queue.h launcher/upcall_queue.cc \
	launcher/pmix_server.h launcher/pmix_server.cc \
	launcher/rank_process.h launcher/rank_process.cc \
	launcher/output_forwarder.h launcher/output_forwarder.cc \
	launcher/stdin_forwarder.h launcher/stdin_forwarder.cc \
	launcher/cleanup_guard.h launcher/cleanup_guard.cc \
	launcher/local_job.h launcher/local_job.cc

bin_PROGRAMS += rrun
rrun_SOURCES = launcher/main.cc
rrun_CPPFLAGS = $(AM_CPPFLAGS) -DRRUN_VERSION='"$(PACKAGE_VERSION)"'
rrun_LDADD = launcher/librrun.la $(PMIX_LIBS) -lpthread

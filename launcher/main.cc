// rrun: starts N ranks of a program on this node as one PMIx job and forwards their I/O.
//
// main only validates the command line and prepares the process (stdio, signals, environment,
// cleanup helper); the job itself runs in LocalJob. A multi-host job (--host/--hostfile, or a
// Slurm allocation) is not rrun's: it execs Open MPI's mpirun or srun --mpi=pmix in its place
// (delegation.h), whose daemons are the PMIx servers of their hosts.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "launcher/cleanup_guard.h"
#include "launcher/delegation.h"
#include "launcher/exec_path.h"
#include "launcher/job_files.h"
#include "launcher/local_job.h"
#include "launcher/options.h"
#include "launcher/rank_env.h"

#ifndef RRUN_VERSION
#define RRUN_VERSION "unknown"  // set by launcher/local.mk from configure's version
#endif

extern char** environ;

namespace {

constexpr int kUsageExitCode = 2;
constexpr int kLaunchFailedExitCode = 1;
// hwloc discovery the server does not need: PCI/IO scans, and the GL plugin (which probes X11
// displays :0-:9 over sockets) and GPU plugins.
constexpr const char* kServerHwlocComponents =
    "-linuxio,-pci,-gl,-opencl,-cuda,-nvml,-rsmi,-levelzero";

// Fds 0-2 must exist, or a pipe could take their numbers and be clobbered by dup2 in the child.
void ensureStdio() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0 && null != fd) {
        dup2(null, fd);
        close(null);
      }
    }
  }
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "rrun: %s\n%s", message.c_str(), rrt::launcher::usageText().c_str());
  return kUsageExitCode;
}

// Outer PMIx settings must not reach this server either; our own store choice goes to the ranks.
// The server's hwloc skips PCI/IO and device discovery (20 ms and more); the ranks'
// environment was copied before, so they still see their NICs. PMIx 4.2.2 does not hand the
// server's topology to its clients (they discover their own).
// HWLOC_PLUGINS_PATH points at the (empty) private temp dir, so no plugin is dlopen'ed at all:
// the GL and OpenCL plugins pull in X11 and OpenCL libraries and halve the server start-up.
void cleanOwnEnvironment(const std::string& emptyDir) {
  std::vector<std::string> stale;
  for (char** p = environ; *p; ++p) {
    std::string entry = *p;
    std::string name = entry.substr(0, entry.find('='));
    if (rrt::launcher::isStalePmixVariable(name)) stale.push_back(name);
  }
  for (const auto& name : stale) unsetenv(name.c_str());
  setenv("PMIX_MCA_gds", "hash", 0);
  setenv("HWLOC_COMPONENTS", kServerHwlocComponents, 0);
  setenv("HWLOC_PLUGINS_PATH", emptyDir.c_str(), 0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rrt::launcher;
  ensureStdio();
  ParseResult parsed = parseOptions(argc, argv);
  switch (parsed.outcome) {
    case ParseOutcome::Help:
      std::fputs(usageText().c_str(), stdout);
      return 0;
    case ParseOutcome::Version:
      std::printf("rrun (rrt) %s\n", RRUN_VERSION);
      return 0;
    case ParseOutcome::Error:
      return usageError(parsed.error);
    case ParseOutcome::Run:
      break;
  }
  ResolvedProgram program = resolveProgram(parsed.options.app[0], std::getenv("PATH"));
  if (!program.ok) return usageError(program.error);

  HostListResult hostfile;
  if (!parsed.options.hostfile.empty()) hostfile = readHostfile(parsed.options.hostfile);
  LaunchPlan plan = planLaunch(parsed.options, program.path, launchEnvFromProcess(), hostfile);
  if (!plan.ok) return usageError(plan.error);
  if (plan.kind != LaunchKind::Local) {
    if (parsed.options.dryRun) {
      std::printf("%s\n", showCommand(plan.command).c_str());
      return 0;
    }
    std::fflush(stdout);
    execDelegated(plan.command);
    std::fprintf(stderr, "rrun: cannot run %s: %s\n", plan.command.argv[0].c_str(),
                 std::strerror(errno));
    return kLaunchFailedExitCode;
  }
  if (parsed.options.dryRun) {
    std::printf("rrun: %d ranks of %s on this node\n", parsed.options.nprocs, program.path.c_str());
    return 0;
  }

  LocalJobConfig config;
  config.options = parsed.options;
  config.program = program.path;
  config.nspace = makeNamespace();
  config.tmpdir = makeTempDir("rrun." + std::to_string(getpid()));
  if (config.tmpdir.empty()) {
    std::perror("rrun: cannot create a temporary directory");
    return kLaunchFailedExitCode;
  }
  config.baseEnv = buildRankEnv(environ, config.options.env);

  // Before any thread exists: the helper (a fork) and the signal mask (inherited by PMIx).
  signal(SIGPIPE, SIG_IGN);
  CleanupGuard guard(jobIdFromNamespace(config.nspace), config.tmpdir, argc, argv);
  sigset_t mask = loopSignals();
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  cleanOwnEnvironment(config.tmpdir);

  int code = runLocalJob(config, &guard);
  std::fflush(stdout);
  std::fflush(stderr);
  // PMIx threads may linger after a bounded shutdown: skip static destructors and atexit.
  _exit(code);
}

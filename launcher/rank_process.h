// Starting one rank: fork, child-side setup, exec.
//
// Everything the child needs is prepared before fork (argv/envp arrays, the CPU set), because
// the launcher is multi-threaded (PMIx) and the child may only make async-signal-safe calls.
// In the child: its own process group (so it and its descendants are signalled together), stdio
// from the given fds, the signal mask cleared and SIGPIPE reset, PR_SET_PDEATHSIG(SIGKILL) (then a
// getppid() check closes the race with a launcher that already died), optional CPU binding,
// other inherited fds closed, execve. An exec failure is reported on the rank's stderr and the
// child exits 127.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rrt::launcher {

struct SpawnSpec {
  std::string path;               // resolved executable
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=VALUE"
  std::vector<int> cpus;          // bind to these CPUs; empty: no binding
  int stdinFd = -1;               // becomes the child's fd 0
  int stdoutFd = -1;              // becomes fd 1
  int stderrFd = -1;              // becomes fd 2
};

// Returns the child's pid (also its process-group id), or -1 with errno set if fork failed.
pid_t spawnRank(const SpawnSpec& spec);

// The CPUs this process may run on, in ascending order (at least one entry).
std::vector<int> usableCpus();

// The usable CPUs grouped by physical core (hardware threads of one core together), cores in
// order of their first CPU. Without topology information every CPU is its own core.
std::vector<std::vector<int>> usableCores();

}  // namespace rrt::launcher

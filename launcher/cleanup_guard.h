// CleanupGuard: a small helper process that cleans up after rrun if rrun itself is killed.
//
// rrun forks it first, while still single-threaded. The helper leaves rrun's session (terminal
// and process-group signals do not reach it), ignores catchable signals, drops stdio, renames its
// command line to "rrun [cleanup]" and reads a pipe from rrun: the pids of started and reaped
// ranks, then "done" once rrun has cleaned up itself. If the pipe ends without "done" (rrun died,
// even by SIGKILL), the helper waits up to kGraceSeconds for the remaining ranks to disappear
// (PR_SET_PDEATHSIG kills them), then removes the job's /dev/shm segments and temp dir and exits.
// All methods are cheap and never block; if the helper could not be started, they do nothing.
#pragma once

#include <sys/types.h>

#include <string>

namespace rrt::launcher {

class CleanupGuard {
 public:
  static constexpr double kGraceSeconds = 5.0;

  // argv/argc: rrun's own, so the helper can overwrite its visible command line.
  CleanupGuard(const std::string& jobId, const std::string& tmpdir, int argc, char** argv);
  ~CleanupGuard();
  CleanupGuard(const CleanupGuard&) = delete;
  CleanupGuard& operator=(const CleanupGuard&) = delete;

  void rankStarted(pid_t pid);
  void rankReaped(pid_t pid);
  // rrun has removed everything itself: the helper exits without doing anything.
  void done();

 private:
  void send(const std::string& line);

  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace rrt::launcher

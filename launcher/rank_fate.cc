#include "launcher/rank_fate.h"

#include <sys/wait.h>

#include <cstring>

namespace rrt::launcher {

int exitCodeFromWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    std::string text = "killed by signal " + std::to_string(sig);
    if (name) text += std::string(" (") + name + ")";
    if (WCOREDUMP(status)) text += ", core dumped";
    return text;
  }
  return "ended with wait status " + std::to_string(status);
}

int exitCodeFromAbort(int status) {
  int code = status & 0xff;
  return code == 0 ? 1 : code;
}

std::string rankLabel(int rank, long pid) {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
}

}  // namespace rrt::launcher

#include "runtime/core/process.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace rrt::core {

bool processAlive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  // A dead child not yet reaped still answers kill(); its state in /proc says 'Z'.
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  char buf[256];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char* paren = strrchr(buf, ')');  // the command name may contain spaces and ')'
  if (!paren || paren[1] != ' ') return true;
  const char state = paren[2];
  return state != 'Z' && state != 'X';
}

}  // namespace rrt::core

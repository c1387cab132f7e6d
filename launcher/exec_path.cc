#include "launcher/exec_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rrt::launcher {
namespace {

// 0 when path is an executable regular file, else an errno value describing why not.
int checkExecutable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (!S_ISREG(st.st_mode)) return EACCES;
  if (access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

}  // namespace

ResolvedProgram resolveProgram(const std::string& name, const char* pathEnv) {
  ResolvedProgram r;
  if (name.empty()) {
    r.error = "empty program name";
    return r;
  }
  if (name.find('/') != std::string::npos) {
    int err = checkExecutable(name);
    if (err != 0) {
      r.error = name + ": " + std::strerror(err);
      return r;
    }
    r.ok = true;
    r.path = name;
    return r;
  }
  std::string path = pathEnv ? pathEnv : "/usr/local/bin:/usr/bin:/bin";
  int firstError = ENOENT;  // like execvp: report EACCES if a candidate existed but was refused
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    int err = checkExecutable(candidate);
    if (err == 0) {
      r.ok = true;
      r.path = candidate;
      return r;
    }
    if (err != ENOENT && err != ENOTDIR) firstError = err;
    start = end + 1;
  }
  r.error = firstError == ENOENT ? name + ": command not found"
                                 : name + ": " + std::strerror(firstError);
  return r;
}

}  // namespace rrt::launcher

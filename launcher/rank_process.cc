#include "launcher/rank_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace rrt::launcher {
namespace {

void writeAll(int fd, const char* s) {
  std::size_t len = std::strlen(s);
  while (len > 0) {
    ssize_t n = write(fd, s, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s += n;
    len -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void childMain(const SpawnSpec& spec, char* const* argv, char* const* envp,
                            const cpu_set_t* cpus, pid_t parent) {
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  if (dup2(spec.stdinFd, 0) < 0 || dup2(spec.stdoutFd, 1) < 0 || dup2(spec.stderrFd, 2) < 0) {
    _exit(127);
  }
#ifdef SYS_close_range
  syscall(SYS_close_range, 3U, ~0U, 0U);  // ENOSYS on old kernels: then CLOEXEC does the work
#endif
  sigset_t none;
  sigemptyset(&none);
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (cpus) sched_setaffinity(0, sizeof(cpu_set_t), cpus);  // best effort: the rank still runs
  execve(spec.path.c_str(), argv, envp);
  int err = errno;
  writeAll(2, "rrun: cannot execute ");
  writeAll(2, spec.path.c_str());
  writeAll(2, ": ");
  writeAll(2, strerror(err));  // not async-signal-safe in theory; glibc's is a table lookup
  writeAll(2, "\n");
  _exit(127);
}

std::vector<char*> cArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

pid_t spawnRank(const SpawnSpec& spec) {
  std::vector<char*> argv = cArray(spec.argv);
  std::vector<char*> envp = cArray(spec.env);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : spec.cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &cpus);
  const cpu_set_t* bind = CPU_COUNT(&cpus) > 0 ? &cpus : nullptr;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) childMain(spec, argv.data(), envp.data(), bind, parent);
  if (pid > 0) setpgid(pid, pid);  // also here: the launcher may signal the group at once
  return pid;
}

std::vector<int> usableCpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) out.push_back(c);
    }
  }
  if (out.empty()) out.push_back(0);
  return out;
}

std::vector<std::vector<int>> usableCores() {
  std::vector<std::vector<int>> cores;
  std::vector<std::pair<long, long>> ids;  // (package, core) of each entry of cores
  for (int c : usableCpus()) {
    long pkg = -1, core = c;  // no topology: the CPU is its own core
    std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    if (FILE* f = std::fopen((base + "physical_package_id").c_str(), "r")) {
      if (std::fscanf(f, "%ld", &pkg) != 1) pkg = -1;
      std::fclose(f);
    }
    if (FILE* f = std::fopen((base + "core_id").c_str(), "r")) {
      if (std::fscanf(f, "%ld", &core) != 1) core = c;
      std::fclose(f);
    }
    size_t i = 0;
    while (i < ids.size() && ids[i] != std::make_pair(pkg, core)) ++i;
    if (i == ids.size()) {
      ids.emplace_back(pkg, core);
      cores.emplace_back();
    }
    cores[i].push_back(c);
  }
  return cores;
}

}  // namespace rrt::launcher

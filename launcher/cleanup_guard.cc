#include "launcher/cleanup_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "launcher/job_files.h"

namespace rrt::launcher {
namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A pid counts as gone when it no longer exists or is a zombie (its reaper may be slow).
bool processGone(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", static_cast<long>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return true;
  char buf[512];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');  // the comm field may contain spaces
  return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

void renameCommandLine(int argc, char** argv) {
  if (argc < 1 || !argv[0]) return;
  char* begin = argv[0];
  char* end = argv[argc - 1] + std::strlen(argv[argc - 1]);
  std::memset(begin, 0, static_cast<size_t>(end - begin));
  std::strncpy(begin, "rrun [cleanup]", static_cast<size_t>(end - begin));
  prctl(PR_SET_NAME, "rrun-cleanup");
}

[[noreturn]] void guardMain(int readFd, const std::string& jobId, const std::string& tmpdir) {
  std::set<pid_t> live;
  std::string line;
  bool finished = false;
  char buf[4096];
  for (;;) {
    ssize_t n = read(readFd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        line += buf[i];
        continue;
      }
      if (line == "done") finished = true;
      if (line.size() > 2 && line[0] == '+') live.insert(std::atol(line.c_str() + 1));
      if (line.size() > 2 && line[0] == '-') live.erase(std::atol(line.c_str() + 1));
      line.clear();
    }
  }
  if (!finished) {
    double deadline = now() + CleanupGuard::kGraceSeconds;
    while (now() < deadline) {
      for (auto it = live.begin(); it != live.end();) {
        it = processGone(*it) ? live.erase(it) : std::next(it);
      }
      if (live.empty()) break;
      usleep(10000);
    }
    removeJobSegments(jobId);
    removeTree(tmpdir);
  }
  _exit(0);
}

}  // namespace

CleanupGuard::CleanupGuard(const std::string& jobId, const std::string& tmpdir, int argc,
                           char** argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[1]);
    setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2}) {
      signal(sig, SIG_IGN);
    }
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    renameCommandLine(argc, argv);
    guardMain(fds[0], jobId, tmpdir);
  }
  close(fds[0]);
  fcntl(fds[1], F_SETFL, O_NONBLOCK);  // rrun must never block on its helper
  fd_ = fds[1];
  pid_ = pid;
}

CleanupGuard::~CleanupGuard() {
  if (fd_ >= 0) close(fd_);
}

void CleanupGuard::send(const std::string& line) {
  if (fd_ < 0) return;
  std::string msg = line + "\n";
  // Short writes to a pipe are atomic; EPIPE (helper gone) is ignored (SIGPIPE is ignored).
  ssize_t n = write(fd_, msg.data(), msg.size());
  (void)n;
}

void CleanupGuard::rankStarted(pid_t pid) { send("+" + std::to_string(pid)); }
void CleanupGuard::rankReaped(pid_t pid) { send("-" + std::to_string(pid)); }
void CleanupGuard::done() { send("done"); }

}  // namespace rrt::launcher

#include "launcher/local_job.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "launcher/cleanup_guard.h"
#include "launcher/job_files.h"
#include "launcher/job_map.h"
#include "launcher/output_forwarder.h"
#include "launcher/pmix_server.h"
#include "launcher/rank_fate.h"
#include "launcher/rank_process.h"
#include "launcher/stdin_forwarder.h"
#include "launcher/upcall_queue.h"

namespace rrt::launcher {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kOutputDrainSeconds = 1.0;  // after the last rank: descendants may hold pipes
constexpr double kServerShutdownSeconds = 2.0;
// A rank that exits 0 before its PMIx finalize reached us may still have finalized: the client
// gives up waiting for the server's answer after a fixed 2 s (PMIx 4.2.2) and exits, and the
// server thread, starved on a loaded machine, reads the finalize later. Judged after this long.
constexpr double kLateFinalizeSeconds = 5.0;

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void report(const std::string& line) {
  std::string out = "rrun: " + line + "\n";
  writeFully(2, out.data(), out.size());
}

struct Rank {
  pid_t pid = -1;
  bool alive = false;
  bool connected = false;
  bool finalized = false;
  double verdictAt = kNever;  // exited 0 unfinalized: warn then unless the finalize comes
};

class LocalJob {
 public:
  LocalJob(const LocalJobConfig& config, CleanupGuard* guard)
      : config_(config), guard_(guard), server_(&queue_) {}

  int run();

 private:
  bool startRanks();
  void loop();
  void handleUpcalls();
  void reapChildren();
  double judgeLateFinalizes(double t);
  void onSignal(int sig);
  void beginTermination(int exitCode, int sig, double grace);
  void signalLiveRanks(int sig);
  int liveRanks() const;
  bool outputsOpen() const;
  void closeOutputs();

  const LocalJobConfig& config_;
  CleanupGuard* guard_;
  UpcallQueue queue_;
  PmixServer server_;
  std::vector<Rank> ranks_;
  std::vector<OutputForwarder> outputs_;
  std::unique_ptr<StdinForwarder> stdin_;
  int signalFd_ = -1;

  bool terminating_ = false;
  int exitCode_ = 0;
  double timeoutAt_ = kNever;
  double escalateAt_ = kNever;  // next SIGKILL round
  double giveUpAt_ = kNever;
  double drainUntil_ = kNever;
};

int LocalJob::run() {
  sigset_t mask = loopSignals();
  signalFd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd_ < 0 || !queue_.valid()) {
    report(std::string("cannot set up the event loop: ") + std::strerror(errno));
    return 1;
  }
  if (config_.options.timeoutSeconds > 0) timeoutAt_ = now() + config_.options.timeoutSeconds;

  std::string err = server_.start(config_.tmpdir);
  if (err.empty()) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    char cwd[4096];
    std::string wdir = getcwd(cwd, sizeof cwd) ? cwd : "/";
    err = server_.registerJob(config_.nspace, JobMap::singleNode(host, config_.options.nprocs),
                              wdir);
  }
  if (!err.empty()) {
    report(err);
    exitCode_ = 1;
  } else if (!startRanks()) {
    if (exitCode_ == 0) exitCode_ = 1;
  }
  loop();
  handleUpcalls();  // release anything PMIx still waits on
  stdin_.reset();
  closeOutputs();
  if (!server_.shutdown(kServerShutdownSeconds)) report("warning: PMIx server shutdown timed out");
  close(signalFd_);
  return exitCode_;
}

bool LocalJob::startRanks() {
  const Options& opts = config_.options;
  const std::vector<std::vector<int>> cores = usableCores();
  // Bound ranks do not migrate: two ranks that start on one CPU stay apart from the first
  // message on (unbound, the scheduler took milliseconds to spread them).
  const bool bind = opts.binding == Binding::Core ||
                    (opts.binding == Binding::Auto && opts.nprocs <= static_cast<int>(cores.size()));
  ranks_.resize(opts.nprocs);
  std::vector<int> all(opts.nprocs);
  for (int r = 0; r < opts.nprocs; ++r) all[r] = r;
  const std::string registered = server_.registerRanks(all, getuid(), getgid());
  int devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  for (int r = 0; r < opts.nprocs; ++r) {
    SpawnSpec spec;
    spec.path = config_.program;
    spec.argv = opts.app;
    spec.env = config_.baseEnv;
    if (bind) spec.cpus = cores[r % cores.size()];
    std::string err = registered;
    if (err.empty()) err = server_.setupFork(r, &spec.env);
    int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1};
    if (err.empty() && (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
                        (r == 0 && pipe2(in, O_CLOEXEC) != 0))) {
      err = std::string("cannot create pipes: ") + std::strerror(errno);
    }
    pid_t pid = -1;
    if (err.empty()) {
      spec.stdinFd = r == 0 ? in[0] : devNull;
      spec.stdoutFd = out[1];
      spec.stderrFd = errp[1];
      pid = spawnRank(spec);
      if (pid < 0) err = std::string("fork failed: ") + std::strerror(errno);
    }
    for (int fd : {out[1], errp[1], in[0]}) {
      if (fd >= 0) close(fd);
    }
    if (!err.empty()) {
      for (int fd : {out[0], errp[0], in[1]}) {
        if (fd >= 0) close(fd);
      }
      report("cannot start rank " + std::to_string(r) + ": " + err);
      ranks_.resize(r);
      if (devNull >= 0) close(devNull);
      beginTermination(1, SIGTERM, kKillGraceSeconds);
      return false;
    }
    guard_->rankStarted(pid);
    ranks_[r].pid = pid;
    ranks_[r].alive = true;
    for (int fd : {out[0], errp[0], in[1]}) {
      if (fd >= 0) fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    outputs_.emplace_back(out[0], 1, r, opts.tagOutput);
    outputs_.emplace_back(errp[0], 2, r, opts.tagOutput);
    if (r == 0) stdin_ = std::make_unique<StdinForwarder>(0, in[1]);
  }
  if (devNull >= 0) close(devNull);
  return true;
}

void LocalJob::loop() {
  std::vector<pollfd> fds;
  std::vector<int> owner;  // index into outputs_, or -1 signal, -2 queue, -3 stdin, -4 stdin pipe
  for (;;) {
    double t = now();
    if (t >= timeoutAt_) {
      timeoutAt_ = kNever;
      if (!terminating_) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%g", config_.options.timeoutSeconds);
        report(std::string("timeout: the job ran longer than ") + secs + " s; killing " +
               std::to_string(liveRanks()) + " rank(s)");
        beginTermination(kTimeoutExitCode, SIGTERM, kKillGraceSeconds);
      }
    }
    if (t >= escalateAt_) {
      signalLiveRanks(SIGKILL);
      escalateAt_ = t + kKillGraceSeconds;  // repeat: a rank may have been mid-fork
      if (giveUpAt_ == kNever) giveUpAt_ = t + kGiveUpSeconds;
    }
    if (liveRanks() > 0 && t >= giveUpAt_) {
      report(std::to_string(liveRanks()) + " rank(s) did not exit after SIGKILL; giving up");
      return;
    }
    const double verdictAt = judgeLateFinalizes(t);
    if (liveRanks() == 0) {
      escalateAt_ = kNever;
      if (stdin_) stdin_->close();
      if (drainUntil_ == kNever) drainUntil_ = t + kOutputDrainSeconds;
      if ((!outputsOpen() || t >= drainUntil_) && verdictAt == kNever) return;
    }

    fds.clear();
    owner.clear();
    fds.push_back({signalFd_, POLLIN, 0});
    owner.push_back(-1);
    fds.push_back({queue_.fd(), POLLIN, 0});
    owner.push_back(-2);
    if (stdin_) {
      if (int fd = stdin_->sourceFdToPoll(); fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        owner.push_back(-3);
      }
      if (int fd = stdin_->pipeFdToPoll(); fd >= 0) {
        fds.push_back({fd, POLLOUT, 0});
        owner.push_back(-4);
      }
    }
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i].open()) {
        fds.push_back({outputs_[i].fd(), POLLIN, 0});
        owner.push_back(static_cast<int>(i));
      }
    }
    double next = std::min({timeoutAt_, escalateAt_, giveUpAt_, drainUntil_, verdictAt});
    int waitMs = -1;
    if (next != kNever) waitMs = std::max(0, static_cast<int>(std::ceil((next - t) * 1000)));
    int n = poll(fds.data(), fds.size(), waitMs);
    if (n < 0 && errno != EINTR) {
      report(std::string("poll failed: ") + std::strerror(errno));
      beginTermination(1, SIGKILL, 0);
      return;
    }
    if (n <= 0) continue;

    // Upcalls first, then signals (reaping), then I/O.
    handleUpcalls();
    if (fds[0].revents) {
      signalfd_siginfo info;
      while (read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGCHLD) {
          reapChildren();
        } else {
          onSignal(static_cast<int>(info.ssi_signo));
        }
      }
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      if (owner[i] == -3) {
        if (stdin_) stdin_->onSourceReadable();
      } else if (owner[i] == -4) {
        if (stdin_) stdin_->onPipeWritable();
      } else if (owner[i] >= 0) {
        outputs_[owner[i]].onReadable();
      }
    }
  }
}

void LocalJob::handleUpcalls() {
  for (Upcall& u : queue_.popAll()) {
    Rank* rank = u.rank < ranks_.size() ? &ranks_[u.rank] : nullptr;
    switch (u.kind) {
      case Upcall::Kind::Connected:
        if (rank) rank->connected = true;
        break;
      case Upcall::Kind::Finalized:
        if (rank) rank->finalized = true;
        break;
      case Upcall::Kind::Abort: {
        if (!terminating_) {
          std::string what = rankLabel(static_cast<int>(u.rank), rank ? rank->pid : -1) +
                             " called abort with status " + std::to_string(u.status);
          if (!u.message.empty()) what += ": " + u.message;
          report(what);
          beginTermination(exitCodeFromAbort(u.status), SIGTERM, kKillGraceSeconds);
        }
        server_.answerAbort(&u);
        break;
      }
      case Upcall::Kind::Fence:
        server_.answerFence(&u);
        break;
      case Upcall::Kind::DirectModex:
        server_.answerDirectModex(u);
        break;
    }
  }
}

void LocalJob::reapChildren() {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;  // 0: none ready; -1: no children
    int r = 0;
    while (r < static_cast<int>(ranks_.size()) && ranks_[r].pid != pid) ++r;
    if (r == static_cast<int>(ranks_.size())) continue;  // the cleanup helper, not a rank
    Rank& rank = ranks_[r];
    rank.alive = false;
    guard_->rankReaped(pid);
    if (r == 0 && stdin_) stdin_->close();
    if (terminating_) continue;  // ended by us: not reported
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      if (rank.connected && !rank.finalized) rank.verdictAt = now() + kLateFinalizeSeconds;
      continue;
    }
    report(rankLabel(r, pid) + " " + describeWaitStatus(status));
    beginTermination(exitCodeFromWaitStatus(status), SIGTERM, kKillGraceSeconds);
  }
}

// Ranks that exited 0 before their finalize arrived: quiet once it came, a warning when it did
// not in time. Returns the earliest verdict still pending (kNever: none).
double LocalJob::judgeLateFinalizes(double t) {
  double next = kNever;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    Rank& rank = ranks_[r];
    if (rank.verdictAt == kNever) continue;
    if (rank.finalized || terminating_) {
      rank.verdictAt = kNever;
    } else if (t >= rank.verdictAt) {
      rank.verdictAt = kNever;
      report("warning: " + rankLabel(static_cast<int>(r), rank.pid) +
             " exited with status 0 without finalizing PMIx");
    } else {
      next = std::min(next, rank.verdictAt);
    }
  }
  return next;
}

void LocalJob::onSignal(int sig) {
  if (terminating_) {
    // A second signal: no more patience.
    signalLiveRanks(SIGKILL);
    if (giveUpAt_ == kNever) giveUpAt_ = now() + kGiveUpSeconds;
    return;
  }
  const char* name = strsignal(sig);
  report("got signal " + std::to_string(sig) + " (" + (name ? name : "?") +
         "); forwarding it to the ranks");
  beginTermination(128 + sig, sig, kSignalGraceSeconds);
}

void LocalJob::beginTermination(int exitCode, int sig, double grace) {
  if (!terminating_) {
    terminating_ = true;
    exitCode_ = exitCode;
  }
  signalLiveRanks(sig);
  double at = now() + grace;
  if (at < escalateAt_) escalateAt_ = at;
}

void LocalJob::signalLiveRanks(int sig) {
  for (const Rank& rank : ranks_) {
    if (!rank.alive) continue;
    // The rank leads its own process group: signal its descendants too.
    if (kill(-rank.pid, sig) != 0) kill(rank.pid, sig);
  }
}

int LocalJob::liveRanks() const {
  int n = 0;
  for (const Rank& rank : ranks_) n += rank.alive ? 1 : 0;
  return n;
}

bool LocalJob::outputsOpen() const {
  for (const auto& out : outputs_) {
    if (out.open()) return true;
  }
  return false;
}

void LocalJob::closeOutputs() {
  for (auto& out : outputs_) out.close();
}

}  // namespace

sigset_t loopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&mask, sig);
  return mask;
}

int runLocalJob(const LocalJobConfig& config, CleanupGuard* guard) {
  LocalJob job(config, guard);
  int code = job.run();
  removeJobSegments(jobIdFromNamespace(config.nspace));
  removeTree(config.tmpdir);
  guard->done();
  return code;
}

}  // namespace rrt::launcher

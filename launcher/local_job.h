// LocalJob: one job whose ranks all run on this node, driven to its end by one poll() loop.
//
// The loop owns everything that happens after start-up: PMIx upcalls (queued by PmixServer),
// signals (a signalfd: SIGCHLD for reaping; SIGINT/SIGTERM/SIGHUP/SIGQUIT forwarded to the ranks),
// rank output, rank 0's stdin, the --timeout deadline and the kill escalation. Upcalls are always
// handled before children are reaped, so a rank that finalized and exited is seen in that order.
//
// Ending: the first event that ends the job early decides the exit code (a rank that exits
// non-zero or dies of a signal, a PMIx_Abort, the timeout, a signal to rrun); the other ranks
// then get SIGTERM (or the forwarded signal) and, kKillGraceSeconds later, SIGKILL. Every wait is
// bounded: ranks that survive SIGKILL for kGiveUpSeconds are abandoned with a report.
// The caller must have blocked kLoopSignals in every thread before calling run().
#pragma once

#include <signal.h>

#include <string>

#include "launcher/options.h"
#include "launcher/rank_env.h"

namespace rrt::launcher {

class CleanupGuard;

struct LocalJobConfig {
  Options options;
  std::string program;  // resolved executable
  std::string nspace;
  std::string tmpdir;   // private; removed at the end
  EnvList baseEnv;      // ranks' environment before PMIx adds its variables
};

constexpr double kKillGraceSeconds = 1.0;     // SIGTERM → SIGKILL after a failure
constexpr double kSignalGraceSeconds = 2.0;   // forwarded SIGINT/SIGTERM → SIGKILL
constexpr double kGiveUpSeconds = 5.0;        // after SIGKILL
constexpr int kTimeoutExitCode = 124;  // like timeout(1)

// Signals the loop reads from its signalfd.
sigset_t loopSignals();

// Runs the job to its end and returns rrun's exit code.
int runLocalJob(const LocalJobConfig& config, CleanupGuard* guard);

}  // namespace rrt::launcher

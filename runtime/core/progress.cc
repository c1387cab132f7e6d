#include "runtime/core/progress.h"

#include <sched.h>
#include <time.h>

#include "runtime/core/config.h"
#include "runtime/core/log.h"

namespace rrt::core {
namespace {

struct Poller {
  PollFn fn;
  void* arg;
};

constexpr int kMaxPollers = 32;
Poller gPollers[kMaxPollers];
int gPollerCount = 0;

uint32_t gSpinCount = 4000;       // idle polls before yielding
uint32_t gSleepAfter = 200000;    // idle polls (after spinning) before short sleeps
bool gYield = true;
double gTimeout = 0;
IdleWaitFn gIdleWait = nullptr;
void* gIdleWaitArg = nullptr;
IdleCheckFn gIdleCheck = nullptr;
void* gIdleCheckArg = nullptr;
double gLastIdleCheck = 0;
constexpr double kIdleCheckSeconds = 0.01;
WaitCounters gCounters;

}  // namespace

void addPoller(PollFn fn, void* arg) {
  if (gPollerCount == kMaxPollers) {
    RRT_ERROR("internal: too many pollers");
    return;
  }
  gPollers[gPollerCount++] = {fn, arg};
}

void removePoller(PollFn fn, void* arg) {
  for (int i = 0; i < gPollerCount; ++i) {
    if (gPollers[i].fn == fn && gPollers[i].arg == arg) {
      for (int j = i + 1; j < gPollerCount; ++j) gPollers[j - 1] = gPollers[j];
      --gPollerCount;
      return;
    }
  }
}

int progress() {
  int events = 0;
  // Index loop: a poller may add or remove pollers while it runs.
  for (int i = 0; i < gPollerCount; ++i) events += gPollers[i].fn(gPollers[i].arg);
  return events;
}

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void configureWaiting(int localRanks, int usableCores) {
  const bool oversubscribed = localRanks > usableCores;
  // Oversubscribed: yield almost at once, the rank we wait for needs this core.
  gSpinCount = static_cast<uint32_t>(
      config::sizeOr(config::Tunable::SpinCount, oversubscribed ? 16 : 20000));
  gYield = config::boolOr(config::Tunable::Yield, true);
  setTimeoutSeconds(config::doubleOr(config::Tunable::Timeout, 0));
  RRT_DEBUG("waiting: %d local ranks on %d cores: spin %u polls, then %s", localRanks,
            usableCores, gSpinCount, gYield ? "yield" : "keep spinning");
}

void setTimeoutSeconds(double s) { gTimeout = s; }

const WaitCounters& waitCounters() { return gCounters; }

void setIdleCheck(IdleCheckFn fn, void* arg) {
  gIdleCheck = fn;
  gIdleCheckArg = arg;
}

void setIdleWait(IdleWaitFn fn, void* arg) {
  gIdleWait = fn;
  gIdleWaitArg = arg;
}

Status waitUntil(bool (*cond)(void* arg), void* arg) {
  uint32_t idle = 0;
  double idleSince = 0;
  while (!cond(arg)) {
    if (progress() > 0) {
      idle = 0;
      idleSince = 0;
      continue;
    }
    ++idle;
    if (gIdleCheck && idle >= gSpinCount && (idle & 63) == 0) {
      const double t = now();
      if (t - gLastIdleCheck >= kIdleCheckSeconds) {
        gLastIdleCheck = t;
        gIdleCheck(gIdleCheckArg);
        continue;  // it may have failed what cond waits for
      }
    }
    if (idle >= gSpinCount && gYield) {
      const int slept = gIdleWait ? gIdleWait(gIdleWaitArg, 1) : 0;
      if (slept) {
        // slept in the kernel until an event (or 1 ms)
        ++gCounters.kernelSleeps;
        if (slept == 2) ++gCounters.woken;
      } else if (idle < gSpinCount + gSleepAfter) {
        ++gCounters.yields;
        sched_yield();
      } else {
        // Long idle: give the core away for a moment (short, so latency stays sane).
        ++gCounters.naps;
        timespec ts{0, 50000};
        nanosleep(&ts, nullptr);
      }
    }
    if (gTimeout > 0 && (idle & 0x3ff) == 0) {
      if (idleSince == 0) {
        idleSince = now();
      } else if (now() - idleSince > gTimeout) {
        RRT_WARN("no progress for %.1f s (RRT_TIMEOUT): giving up the wait", gTimeout);
        return Status::ErrTimeout;
      }
    }
  }
  return Status::Ok;
}

}  // namespace rrt::core

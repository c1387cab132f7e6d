// The progress engine: one call, progress(), polls every transport and then every registered
// poller (protocol retries, collective state machines), and returns how many events happened.
//
// Waiting is done by waitUntil(cond): spin on progress() while events come; after spinCount
// idle polls, yield the CPU on each idle poll (sched_yield hands the core to another rank in
// ~2 us on this kind of machine); after a long idle stretch sleep briefly. When the node is
// oversubscribed (more local ranks than usable cores) yielding starts almost at once, which is
// what keeps 8 ranks on 2 cores fast. Single-threaded; nothing here allocates after init.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"

namespace rrt::core {

using PollFn = int (*)(void* arg);  // returns the number of events handled

// Registers a poller; kept until removePoller. At most a few dozen.
void addPoller(PollFn fn, void* arg);
void removePoller(PollFn fn, void* arg);

int progress();

// Blocking instead of yielding: when set, a wait that stays idle past the spin phase calls
// fn(arg, ms), which may sleep up to ms milliseconds until new events can be expected (e.g. in
// poll() on a transport's event fd) and returns 0 when it cannot block now (then the wait
// yields as usual), 1 when it slept to the timeout, 2 when an event woke it. nullptr removes it.
using IdleWaitFn = int (*)(void* arg, int ms);
void setIdleWait(IdleWaitFn fn, void* arg);

// Looking for dead peers: a wait that stays idle past the spin phase calls fn(arg) about every
// 10 ms (e.g. to ask transports whether a peer they would not otherwise hear from has died).
// nullptr removes it.
using IdleCheckFn = void (*)(void* arg);
void setIdleCheck(IdleCheckFn fn, void* arg);

// What waitUntil did while idle (for RRT_STATS and tests): sleeps in the idle-wait function
// (kernelSleeps; woken, those that ended because its fd had events rather than at the
// timeout), sched_yield calls and short naps.
struct WaitCounters {
  uint64_t kernelSleeps = 0, woken = 0, yields = 0, naps = 0;
};
const WaitCounters& waitCounters();

// Tuning, set at init from the config table and the node's load.
void configureWaiting(int localRanks, int usableCores);
// 0 = never time out; else a wait with no event for this long fails with ErrTimeout.
void setTimeoutSeconds(double s);

// Spins/yields until cond(arg) is true. Returns Ok, or ErrTimeout per RRT_TIMEOUT, or the
// status a fatal condition set (abortWaits).
Status waitUntil(bool (*cond)(void* arg), void* arg);

template <typename F>
Status waitFor(F&& f) {
  return waitUntil([](void* a) { return (*static_cast<F*>(a))(); }, &f);
}

double now();  // seconds, monotonic

}  // namespace rrt::core

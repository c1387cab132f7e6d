// The job's secret: kBytes random bytes made once per job by rrun and given to every rank as
// the job-level PMIx key "rrt.secret" (a hex string; never on a command line or in the
// environment). Transports that accept connections (TCP) admit only peers that present it.
#pragma once

#include <string>

namespace rrt::launcher {

// 64 hex digits from getrandom(); empty if the kernel gave no randomness.
std::string newJobSecretHex();

}  // namespace rrt::launcher

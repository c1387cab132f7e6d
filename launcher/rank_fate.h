// How a rank ended, as an exit code for rrun and as words for the one-line report.
//
// Exit codes follow the shell: a rank's own status, 128+N when killed by signal N. An abort's
// code is taken modulo 256 like exit(); an abort with a code that is 0 modulo 256 becomes 1, so an
// aborted job never looks successful.
#pragma once

#include <string>

namespace rrt::launcher {

// waitpid() status → exit code for rrun.
int exitCodeFromWaitStatus(int status);
// waitpid() status → "exited with status 3" / "killed by signal 9 (Killed)".
std::string describeWaitStatus(int status);
// PMIx_Abort status → exit code for rrun.
int exitCodeFromAbort(int status);
// "rank 2 (pid 1234)"
std::string rankLabel(int rank, long pid);

}  // namespace rrt::launcher

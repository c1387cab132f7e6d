// The process-wide state of the C API: before init, active, finalized.
#pragma once

namespace rrt::api {

enum class State { Uninitialized, Active, Finalized };
extern State gState;

// Ends the job: tells the launcher (PMIx_Abort), then exits with code. Never returns.
[[noreturn]] void abortProcess(int code, const char* why);

}  // namespace rrt::api

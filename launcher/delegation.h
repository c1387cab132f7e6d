// Delegation: rrun does not start processes on other hosts itself. A multi-host job is handed
// to the resource manager's own PMIx launcher, whose daemons are the PMIx servers of their
// hosts, and the unchanged ranks run under it:
//
//   --host / --hostfile given        -> Open MPI's mpirun (mpirun.openmpi where Debian's
//                                       alternatives may point "mpirun" at MPICH)
//   inside a Slurm allocation        -> srun --mpi=pmix (SLURM_JOB_ID set, and not already
//                                       inside a job step: SLURM_STEP_ID unset)
//   otherwise                        -> rrun's own PMIx server on this node (LocalJob)
//
// --launcher local|srun|mpirun overrides the choice. planLaunch is pure (the environment comes
// in as LaunchEnv, a hostfile's text through readHostfile before): it returns the decision and,
// for a delegated job, the exact command (argv, plus variables to set before exec) or an error
// message. rrun --dry-run prints that command instead of running it.
//
// Options map as follows (mpirun / srun):
//   -n N              -np N            / -n N
//   --host, --hostfile                 / (Slurm's allocation decides)
//   --bind-to core|none  --bind-to core|none / --cpu-bind=cores|none (auto: the launcher's default)
//   --tag-output      --tag-output     / --label
//   --timeout S       --timeout S      / --time=M (minutes, rounded up: the step's limit)
//   --oversubscribe   --oversubscribe  / --overcommit
//   -x VAR=VALUE      -x VAR=VALUE     / VAR=VALUE in srun's environment (srun exports all)
//   rrt's RRT_* variables of rrun's environment: -x VAR for mpirun (it forwards only what -x
//   names to other hosts); srun forwards the whole environment anyway.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "launcher/host_list.h"
#include "launcher/options.h"

namespace rrt::launcher {

enum class LaunchKind { Local, Srun, Mpirun };

struct LaunchEnv {
  bool slurmJob = false;   // SLURM_JOB_ID set
  bool slurmStep = false;  // SLURM_STEP_ID set: already a task of a step, never nest srun
  std::vector<std::string> rrtVariables;  // names of the RRT_* variables set in rrun's env
  std::string mpirun = "mpirun";          // the mpirun to run (path or name)
  std::string srun = "srun";
};

// From this process's environment; mpirun is mpirun.openmpi when PATH has it.
LaunchEnv launchEnvFromProcess();

struct DelegatedCommand {
  std::vector<std::string> argv;                            // argv[0]: the launcher
  std::vector<std::pair<std::string, std::string>> setEnv;  // before exec
};

struct LaunchPlan {
  bool ok = false;
  LaunchKind kind = LaunchKind::Local;
  DelegatedCommand command;  // when ok and kind != Local
  std::string error;         // when !ok
};

// hostfileHosts: the parsed --hostfile (readHostfile), ignored without one.
LaunchPlan planLaunch(const Options& opts, const std::string& program, const LaunchEnv& env,
                      const HostListResult& hostfileHosts);

// The command as one shell-quoted line (for --dry-run and error messages).
std::string showCommand(const DelegatedCommand& cmd);

// Sets cmd.setEnv and execs cmd.argv (PATH search); returns only on failure, with errno set.
void execDelegated(const DelegatedCommand& cmd);

}  // namespace rrt::launcher

// Options: rrun's command line, parsed into plain data.
//
// parseOptions never exits and never prints: it returns either the options or an error message
// (and whether --help / --version was asked for). main decides what to print and which exit code
// to use. The application is not resolved here (see exec_path.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rrt::launcher {

// Auto (the default, as Open MPI's mpirun): Core when there are at least as many cores as
// ranks, None when oversubscribed.
enum class Binding { Auto, None, Core };

// Who starts the ranks (delegation.h): Auto picks from --host/--hostfile and Slurm.
enum class LauncherChoice { Auto, Local, Srun, Mpirun };

struct Options {
  int nprocs = 0;
  bool tagOutput = false;
  double timeoutSeconds = 0;  // 0: no timeout
  Binding binding = Binding::Auto;
  bool oversubscribe = false;  // accepted; oversubscription is always allowed (see README)
  // Variables to set in the ranks' environment, in command-line order: -x VAR copies the
  // launcher's value, -x VAR=VALUE and --env VAR=VALUE set one.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> app;  // program and its arguments
  // Multi-host (delegation.h): Open MPI style --host list and --hostfile path, unparsed here.
  std::string hosts;
  std::string hostfile;
  LauncherChoice launcher = LauncherChoice::Auto;
  bool dryRun = false;  // print the command a delegated job would run, run nothing
};

enum class ParseOutcome { Run, Help, Version, Error };

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::Error;
  Options options;
  std::string error;  // set when outcome == Error
};

// argv[0] is skipped. Options end at the first argument that does not start with '-' or at "--".
ParseResult parseOptions(int argc, const char* const argv[]);

// The usage text, for --help (stdout) and after errors (stderr).
std::string usageText();

}  // namespace rrt::launcher

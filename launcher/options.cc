#include "launcher/options.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rrt::launcher {
namespace {

bool parseCount(const std::string& text, int* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parseSeconds(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e7) return false;
  *out = v;
  return true;
}

bool validVarName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// "VAR" takes the launcher's value (skipped if unset: the rank then inherits nothing);
// "VAR=VALUE" sets it.
bool addEnv(const std::string& spec, bool requireValue, Options* opts, std::string* error) {
  auto eq = spec.find('=');
  std::string name = spec.substr(0, eq);
  if (!validVarName(name) || (requireValue && eq == std::string::npos)) {
    *error = "invalid environment specification '" + spec + "'";
    return false;
  }
  if (eq != std::string::npos) {
    opts->env.emplace_back(name, spec.substr(eq + 1));
  } else if (const char* v = std::getenv(name.c_str())) {
    opts->env.emplace_back(name, v);
  }
  return true;
}

ParseResult fail(std::string message) {
  ParseResult r;
  r.outcome = ParseOutcome::Error;
  r.error = std::move(message);
  return r;
}

}  // namespace

ParseResult parseOptions(int argc, const char* const argv[]) {
  ParseResult result;
  Options& opts = result.options;
  int i = 1;
  // Fetches the value of an option given as "--opt value", "--opt=value" or "-nVALUE".
  auto value = [&](const std::string& arg, const std::string& name, std::string* out) -> bool {
    if (arg.size() > name.size()) {
      std::size_t skip = name.size() + (arg[name.size()] == '=' ? 1 : 0);
      *out = arg.substr(skip);
      return true;
    }
    if (i + 1 >= argc) return false;
    *out = argv[++i];
    return true;
  };
  auto matches = [](const std::string& arg, const std::string& name, bool shortOpt) {
    if (arg == name) return true;
    if (arg.compare(0, name.size(), name) != 0) return false;
    return shortOpt || arg[name.size()] == '=';
  };

  bool sawN = false;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    std::string v;
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-' || arg == "-") break;
    if (arg == "-h" || arg == "--help") {
      result.outcome = ParseOutcome::Help;
      return result;
    }
    if (arg == "-V" || arg == "--version") {
      result.outcome = ParseOutcome::Version;
      return result;
    }
    if (matches(arg, "-n", true) || matches(arg, "-np", false) || matches(arg, "--np", false)) {
      std::string name = arg.rfind("--np", 0) == 0 ? "--np"
                         : arg.rfind("-np", 0) == 0 ? "-np"
                                                    : arg.substr(0, 2);
      if (!value(arg, name, &v)) return fail("option " + name + " needs a number");
      if (!parseCount(v, &opts.nprocs)) {
        return fail("invalid number of processes '" + v + "' (must be a positive integer)");
      }
      sawN = true;
    } else if (arg == "--tag-output") {
      opts.tagOutput = true;
    } else if (arg == "--oversubscribe") {
      opts.oversubscribe = true;
    } else if (matches(arg, "--timeout", false)) {
      if (!value(arg, "--timeout", &v)) return fail("option --timeout needs a number of seconds");
      if (!parseSeconds(v, &opts.timeoutSeconds)) {
        return fail("invalid --timeout '" + v + "' (must be a positive number of seconds)");
      }
    } else if (matches(arg, "--bind-to", false)) {
      if (!value(arg, "--bind-to", &v)) return fail("option --bind-to needs core, none or auto");
      if (v == "auto") {
        opts.binding = Binding::Auto;
      } else if (v == "core") {
        opts.binding = Binding::Core;
      } else if (v == "none") {
        opts.binding = Binding::None;
      } else {
        return fail("invalid --bind-to '" + v + "' (use core, none or auto)");
      }
    } else if (matches(arg, "--host", false) || arg == "-H") {
      std::string name = arg == "-H" ? "-H" : "--host";
      if (!value(arg, name, &v) || v.empty()) return fail("option " + name + " needs a host list");
      opts.hosts = opts.hosts.empty() ? v : opts.hosts + "," + v;
    } else if (matches(arg, "--hostfile", false)) {
      if (!value(arg, "--hostfile", &v) || v.empty()) return fail("option --hostfile needs a file");
      opts.hostfile = v;
    } else if (matches(arg, "--launcher", false)) {
      if (!value(arg, "--launcher", &v)) return fail("option --launcher needs auto, local, srun or mpirun");
      if (v == "auto") {
        opts.launcher = LauncherChoice::Auto;
      } else if (v == "local") {
        opts.launcher = LauncherChoice::Local;
      } else if (v == "srun") {
        opts.launcher = LauncherChoice::Srun;
      } else if (v == "mpirun") {
        opts.launcher = LauncherChoice::Mpirun;
      } else {
        return fail("invalid --launcher '" + v + "' (use auto, local, srun or mpirun)");
      }
    } else if (arg == "--dry-run") {
      opts.dryRun = true;
    } else if (matches(arg, "-x", true)) {
      if (!value(arg, "-x", &v)) return fail("option -x needs a variable name");
      if (!addEnv(v, false, &opts, &result.error)) return fail(result.error);
    } else if (matches(arg, "--env", false)) {
      if (!value(arg, "--env", &v)) return fail("option --env needs VAR=VALUE");
      if (!addEnv(v, true, &opts, &result.error)) return fail(result.error);
    } else {
      return fail("unknown option '" + arg + "'");
    }
  }
  if (!sawN) return fail("missing -n N (the number of processes)");
  if (i >= argc) return fail("missing the program to run");
  for (; i < argc; ++i) opts.app.emplace_back(argv[i]);
  result.outcome = ParseOutcome::Run;
  return result;
}

std::string usageText() {
  return "Usage: rrun -n N [options] program [args...]\n"
         "Starts N copies of program as one PMIx job: on this node, or, with --host/--hostfile\n"
         "or inside a Slurm allocation, through mpirun or srun --mpi=pmix.\n"
         "\n"
         "  -n, -np N              number of processes (required, >= 1)\n"
         "  --tag-output           prefix every output line with \"[rank] \"\n"
         "  --timeout SECONDS      kill the job after SECONDS; rrun then exits 124\n"
         "  -x VAR                 pass the launcher's VAR to the ranks\n"
         "  -x VAR=VALUE, --env VAR=VALUE\n"
         "                         set VAR in the ranks' environment\n"
         "  --bind-to core|none|auto\n"
         "                         core: rank i runs on core i mod cores (all its hardware\n"
         "                         threads); auto (default): core unless ranks > cores\n"
         "  --oversubscribe        accepted for compatibility: more ranks than cores is always\n"
         "                         allowed\n"
         "  -H, --host HOST[:SLOTS],...\n"
         "                         run on these hosts through Open MPI's mpirun\n"
         "  --hostfile FILE        the same with an Open MPI hostfile\n"
         "  --launcher auto|local|srun|mpirun\n"
         "                         who starts the ranks; auto (default): mpirun with\n"
         "                         --host/--hostfile, srun inside a Slurm allocation\n"
         "                         (SLURM_JOB_ID set, SLURM_STEP_ID not), else this node\n"
         "  --dry-run              print the mpirun/srun command line, run nothing\n"
         "  -h, --help             this text\n"
         "  -V, --version          the version\n"
         "\n"
         "Exit status: 0 when every rank exits 0; else the first failing rank's status\n"
         "(128+N for signal N, the code given to PMIx_Abort/rrt_abort); 124 on --timeout;\n"
         "128+N when rrun itself got signal N; 2 for a bad command line; 1 when the launch fails.\n";
}

}  // namespace rrt::launcher

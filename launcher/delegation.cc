#include "launcher/delegation.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "launcher/exec_path.h"

extern char** environ;

namespace rrt::launcher {
namespace {

LaunchPlan fail(std::string message) {
  LaunchPlan p;
  p.error = std::move(message);
  return p;
}

// Open MPI 4.1's --timeout takes whole seconds; round up so the job never ends early.
std::string wholeSeconds(double s) { return std::to_string(static_cast<long long>(std::ceil(s))); }

bool namedByX(const Options& opts, const std::string& name) {
  for (const auto& kv : opts.env)
    if (kv.first == name) return true;
  return false;
}

DelegatedCommand mpirunCommand(const Options& opts, const std::string& program,
                               const LaunchEnv& env) {
  DelegatedCommand c;
  auto& a = c.argv;
  a = {env.mpirun, "-np", std::to_string(opts.nprocs)};
  if (!opts.hosts.empty()) a.insert(a.end(), {"--host", opts.hosts});
  if (!opts.hostfile.empty()) a.insert(a.end(), {"--hostfile", opts.hostfile});
  if (opts.binding == Binding::Core) a.insert(a.end(), {"--bind-to", "core"});
  if (opts.binding == Binding::None) a.insert(a.end(), {"--bind-to", "none"});
  if (opts.oversubscribe) a.push_back("--oversubscribe");
  if (opts.tagOutput) a.push_back("--tag-output");
  if (opts.timeoutSeconds > 0) a.insert(a.end(), {"--timeout", wholeSeconds(opts.timeoutSeconds)});
  for (const std::string& name : env.rrtVariables)
    if (!namedByX(opts, name)) a.insert(a.end(), {"-x", name});
  for (const auto& kv : opts.env) a.insert(a.end(), {"-x", kv.first + "=" + kv.second});
  a.push_back(program);
  a.insert(a.end(), opts.app.begin() + 1, opts.app.end());
  return c;
}

DelegatedCommand srunCommand(const Options& opts, const std::string& program, const LaunchEnv& env) {
  DelegatedCommand c;
  auto& a = c.argv;
  a = {env.srun, "--mpi=pmix", "-n", std::to_string(opts.nprocs)};
  if (opts.binding == Binding::Core) a.push_back("--cpu-bind=cores");
  if (opts.binding == Binding::None) a.push_back("--cpu-bind=none");
  if (opts.oversubscribe) a.push_back("--overcommit");
  if (opts.tagOutput) a.push_back("--label");
  if (opts.timeoutSeconds > 0) {
    a.push_back("--time=" + std::to_string(static_cast<long long>(std::ceil(opts.timeoutSeconds / 60))));
  }
  a.push_back(program);
  a.insert(a.end(), opts.app.begin() + 1, opts.app.end());
  c.setEnv = opts.env;
  return c;
}

bool shellSafe(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%_+=:,./-", c))) return false;
  }
  return true;
}

std::string quote(const std::string& s) {
  if (shellSafe(s)) return s;
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

}  // namespace

LaunchEnv launchEnvFromProcess() {
  LaunchEnv env;
  env.slurmJob = std::getenv("SLURM_JOB_ID") != nullptr;
  env.slurmStep = std::getenv("SLURM_STEP_ID") != nullptr;
  for (char** p = environ; *p; ++p) {
    if (std::strncmp(*p, "RRT_", 4) != 0) continue;
    const char* eq = std::strchr(*p, '=');
    if (eq) env.rrtVariables.emplace_back(*p, static_cast<std::size_t>(eq - *p));
  }
  if (resolveProgram("mpirun.openmpi", std::getenv("PATH")).ok) env.mpirun = "mpirun.openmpi";
  return env;
}

LaunchPlan planLaunch(const Options& opts, const std::string& program, const LaunchEnv& env,
                      const HostListResult& hostfileHosts) {
  const bool hostsGiven = !opts.hosts.empty() || !opts.hostfile.empty();
  LaunchKind kind = LaunchKind::Local;
  switch (opts.launcher) {
    case LauncherChoice::Auto:
      if (hostsGiven) kind = LaunchKind::Mpirun;
      else if (env.slurmJob && !env.slurmStep) kind = LaunchKind::Srun;
      break;
    case LauncherChoice::Local: kind = LaunchKind::Local; break;
    case LauncherChoice::Srun: kind = LaunchKind::Srun; break;
    case LauncherChoice::Mpirun: kind = LaunchKind::Mpirun; break;
  }
  if (hostsGiven && kind != LaunchKind::Mpirun) {
    return fail("--host and --hostfile need --launcher mpirun (Slurm's allocation decides srun's "
                "hosts; rrun alone runs on this node only)");
  }
  if (kind == LaunchKind::Mpirun && !hostsGiven)
    return fail("--launcher mpirun needs --host or --hostfile");
  if (kind == LaunchKind::Srun && !env.slurmJob)
    return fail("--launcher srun needs a Slurm allocation (SLURM_JOB_ID is not set)");

  LaunchPlan plan;
  plan.kind = kind;
  if (kind == LaunchKind::Mpirun) {
    std::vector<HostSlots> hosts;
    if (!opts.hosts.empty()) {
      HostListResult h = parseHostList(opts.hosts);
      if (!h.ok) return fail(h.error);
      hosts = h.hosts;
    }
    if (!opts.hostfile.empty()) {
      if (!hostfileHosts.ok) return fail(hostfileHosts.error);
      hosts.insert(hosts.end(), hostfileHosts.hosts.begin(), hostfileHosts.hosts.end());
    }
    long slots = statedSlots(hosts);
    if (!opts.hostfile.empty() && !opts.hosts.empty()) slots = -1;  // mpirun intersects them
    if (slots >= 0 && opts.nprocs > slots && !opts.oversubscribe) {
      return fail("-n " + std::to_string(opts.nprocs) + " needs more than the " +
                  std::to_string(slots) + " slots the hosts give (add slots, or --oversubscribe)");
    }
    plan.command = mpirunCommand(opts, program, env);
  } else if (kind == LaunchKind::Srun) {
    plan.command = srunCommand(opts, program, env);
  }
  plan.ok = true;
  return plan;
}

std::string showCommand(const DelegatedCommand& cmd) {
  std::string line;
  for (const auto& kv : cmd.setEnv) line += quote(kv.first + "=" + kv.second) + " ";
  for (std::size_t i = 0; i < cmd.argv.size(); ++i) line += (i ? " " : "") + quote(cmd.argv[i]);
  return line;
}

void execDelegated(const DelegatedCommand& cmd) {
  for (const auto& kv : cmd.setEnv) setenv(kv.first.c_str(), kv.second.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : cmd.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
}

}  // namespace rrt::launcher

// Unit tests of rrun's pure parts: option parsing, program lookup, rank environment, exit codes,
// job file names, line forwarding, host lists and the delegated mpirun/srun command lines; and
// the upcall queue between PMIx's threads and the launcher's loop (run it under
// --enable-sanitizers=thread too).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher/delegation.h"
#include "launcher/exec_path.h"
#include "launcher/host_list.h"
#include "launcher/job_files.h"
#include "launcher/job_map.h"
#include "launcher/options.h"
#include "launcher/output_forwarder.h"
#include "launcher/rank_env.h"
#include "launcher/rank_fate.h"
#include "launcher/upcall_queue.h"

namespace rrt::launcher {
namespace {

ParseResult parse(std::vector<const char*> args) {
  args.insert(args.begin(), "rrun");
  return parseOptions(static_cast<int>(args.size()), args.data());
}

TEST(Options, ParsesAllForms) {
  ParseResult r = parse({"-n", "4", "--tag-output", "--timeout", "2.5", "--bind-to=core",
                         "--env", "A=1", "-x", "B=2", "--oversubscribe", "prog", "-n", "x"});
  ASSERT_EQ(r.outcome, ParseOutcome::Run) << r.error;
  EXPECT_EQ(r.options.nprocs, 4);
  EXPECT_TRUE(r.options.tagOutput);
  EXPECT_DOUBLE_EQ(r.options.timeoutSeconds, 2.5);
  EXPECT_EQ(r.options.binding, Binding::Core);
  EXPECT_TRUE(r.options.oversubscribe);
  ASSERT_EQ(r.options.env.size(), 2u);
  EXPECT_EQ(r.options.env[0], std::make_pair(std::string("A"), std::string("1")));
  EXPECT_EQ(r.options.env[1], std::make_pair(std::string("B"), std::string("2")));
  // Options after the program belong to the program.
  EXPECT_EQ(r.options.app, (std::vector<std::string>{"prog", "-n", "x"}));
}

TEST(Options, BindingForms) {
  EXPECT_EQ(parse({"-n", "2", "p"}).options.binding, Binding::Auto);
  EXPECT_EQ(parse({"-n", "2", "--bind-to", "none", "p"}).options.binding, Binding::None);
  EXPECT_EQ(parse({"-n", "2", "--bind-to", "auto", "p"}).options.binding, Binding::Auto);
  EXPECT_EQ(parse({"-n", "2", "--bind-to=core", "p"}).options.binding, Binding::Core);
}

TEST(Options, CountForms) {
  EXPECT_EQ(parse({"-n8", "p"}).options.nprocs, 8);
  EXPECT_EQ(parse({"-np", "3", "p"}).options.nprocs, 3);
  EXPECT_EQ(parse({"--np=5", "p"}).options.nprocs, 5);
  EXPECT_EQ(parse({"-n", "2", "--", "-weird"}).options.app[0], "-weird");
}

TEST(Options, CopiesLauncherVariable) {
  setenv("RRUN_UNIT_VAR", "from-launcher", 1);
  ParseResult r = parse({"-n", "1", "-x", "RRUN_UNIT_VAR", "p"});
  ASSERT_EQ(r.options.env.size(), 1u);
  EXPECT_EQ(r.options.env[0].second, "from-launcher");
  unsetenv("RRUN_UNIT_VAR");
  EXPECT_TRUE(parse({"-n", "1", "-x", "RRUN_UNIT_VAR", "p"}).options.env.empty());
}

TEST(Options, Errors) {
  EXPECT_EQ(parse({"p"}).outcome, ParseOutcome::Error);                       // no -n
  EXPECT_EQ(parse({"-n", "0", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "-2", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2x", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2"}).outcome, ParseOutcome::Error);                 // no program
  EXPECT_EQ(parse({"-n"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "--bogus", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "--timeout", "0", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "--timeout", "abc", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "--bind-to", "socket", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "--env", "NOVALUE", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "2", "-x", "1BAD=2", "p"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"--help"}).outcome, ParseOutcome::Help);
  EXPECT_EQ(parse({"--version"}).outcome, ParseOutcome::Version);
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeTempDir("rrun-unit");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { removeTree(dir_); }
  std::string file(const std::string& name, mode_t mode) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n";
    chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(TempDir, ResolvesLikeExecvp) {
  std::string exe = file("tool", 0755);
  file("plain", 0644);
  std::string path = "/nonexistent:" + dir_;
  ResolvedProgram r = resolveProgram("tool", path.c_str());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.path, exe);
  EXPECT_FALSE(resolveProgram("plain", path.c_str()).ok);
  EXPECT_NE(resolveProgram("plain", path.c_str()).error.find("Permission denied"),
            std::string::npos);
  EXPECT_NE(resolveProgram("missing", path.c_str()).error.find("command not found"),
            std::string::npos);
  EXPECT_TRUE(resolveProgram(exe, "").ok);
  EXPECT_FALSE(resolveProgram(dir_ + "/plain", "").ok);
  EXPECT_FALSE(resolveProgram(dir_, "").ok);  // a directory
}

TEST_F(TempDir, RemovesOnlyThisJobsSegments) {
  std::string id = jobIdFromNamespace("rrun-12-0000abcd");
  for (const char* name : {"rrt-rrun-12-0000abcd", "rrt-rrun-12-0000abcd-seg0",
                           "rrt-rrun-123-0000abcd", "other"}) {
    std::ofstream(dir_ + "/" + name) << "x";
  }
  EXPECT_EQ(removeJobSegments(id, dir_), 2);
  EXPECT_EQ(access((dir_ + "/rrt-rrun-123-0000abcd").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir_ + "/other").c_str(), F_OK), 0);
}

TEST(JobFiles, JobIdSanitizes) {
  EXPECT_EQ(jobIdFromNamespace("a b/c:d.e-f_9"), "a_b_c_d.e-f_9");
  std::string ns = makeNamespace();
  EXPECT_EQ(ns.rfind("rrun-" + std::to_string(getpid()) + "-", 0), 0u);
  EXPECT_EQ(jobIdFromNamespace(ns), ns);
}

TEST(RankEnv, StripsStalePmixKeepsMca) {
  const char* inherited[] = {"PATH=/bin", "PMIX_NAMESPACE=old", "PMIX_SERVER_URI41=x",
                             "PMIX_MCA_ptl=tcp", "HOME=/root", nullptr};
  EnvList env = buildRankEnv(inherited, {{"HOME", "/tmp"}, {"NEW", "v"}});
  EXPECT_EQ(findEnvEntry(env, "PMIX_NAMESPACE"), nullptr);
  EXPECT_EQ(findEnvEntry(env, "PMIX_SERVER_URI41"), nullptr);
  ASSERT_NE(findEnvEntry(env, "PMIX_MCA_ptl"), nullptr);
  EXPECT_EQ(*findEnvEntry(env, "HOME"), "HOME=/tmp");
  EXPECT_EQ(*findEnvEntry(env, "NEW"), "NEW=v");
  EXPECT_EQ(*findEnvEntry(env, "PMIX_MCA_gds"), "PMIX_MCA_gds=hash");
  const char* userGds[] = {"PMIX_MCA_gds=ds21", nullptr};
  EXPECT_EQ(*findEnvEntry(buildRankEnv(userGds, {}), "PMIX_MCA_gds"), "PMIX_MCA_gds=ds21");
}

int waitStatusOf(void (*body)()) {
  pid_t pid = fork();
  if (pid == 0) body();
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(RankFate, ExitCodesAndWords) {
  int exited3 = waitStatusOf([] { _exit(3); });
  EXPECT_EQ(exitCodeFromWaitStatus(exited3), 3);
  EXPECT_EQ(describeWaitStatus(exited3), "exited with status 3");
  int killed = waitStatusOf([] {
    kill(getpid(), SIGKILL);
    _exit(0);
  });
  EXPECT_EQ(exitCodeFromWaitStatus(killed), 137);
  EXPECT_EQ(describeWaitStatus(killed), "killed by signal 9 (Killed)");
  EXPECT_EQ(exitCodeFromAbort(5), 5);
  EXPECT_EQ(exitCodeFromAbort(0), 1);
  EXPECT_EQ(exitCodeFromAbort(256), 1);
  EXPECT_EQ(exitCodeFromAbort(-1), 255);
  EXPECT_EQ(rankLabel(2, 1234), "rank 2 (pid 1234)");
}

TEST(JobMap, SingleNodeRegexInputs) {
  JobMap map = JobMap::singleNode("host", 3);
  EXPECT_EQ(map.size(), 3);
  EXPECT_EQ(map.hostList(), "host");
  EXPECT_EQ(map.ppnList(), "0,1,2");
  EXPECT_EQ(map.localRankOf(2), 2);
  EXPECT_EQ(map.nodeOf(1), 0);
  EXPECT_EQ(map.nodeOf(3), -1);
}

// Feeds `input` through a forwarder (a writer thread fills the pipe) into a temp file.
std::string forward(const std::string& input, bool tag) {
  int in[2];
  EXPECT_EQ(pipe(in), 0);
  fcntl(in[0], F_SETFL, O_NONBLOCK);
  FILE* sink = tmpfile();
  std::thread writer([&] {
    EXPECT_EQ(write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    close(in[1]);
  });
  {
    OutputForwarder fwd(in[0], fileno(sink), 7, tag);
    while (fwd.open()) {
      pollfd p{fwd.fd(), POLLIN, 0};
      poll(&p, 1, 1000);
      fwd.onReadable();
    }
  }
  writer.join();
  std::string result;
  rewind(sink);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, sink)) > 0) result.append(buf, n);
  fclose(sink);
  return result;
}

TEST(OutputForwarder, LinesAndPartialLast) {
  EXPECT_EQ(forward("a\nbc\ntail", false), "a\nbc\ntail");
  EXPECT_EQ(forward("a\nbc\ntail", true), "[7] a\n[7] bc\n[7] tail\n");
  EXPECT_EQ(forward("", true), "");
  std::string longLine(OutputForwarder::kMaxLine + 10, 'x');
  std::string tagged = forward(longLine, true);
  EXPECT_EQ(tagged.size(), longLine.size() + 2 * 5);  // split once: two prefixes, two newlines
}

// ---- host lists and delegation (delegation.h) ----------------------------------------------

TEST(HostList, ParsesNamesAndSlots) {
  HostListResult r = parseHostList("nodeA:2,node-b.example:3,10.0.0.7");
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.hosts.size(), 3u);
  EXPECT_EQ(r.hosts[0].name, "nodeA");
  EXPECT_EQ(r.hosts[0].slots, 2);
  EXPECT_EQ(r.hosts[1].name, "node-b.example");
  EXPECT_EQ(r.hosts[1].slots, 3);
  EXPECT_EQ(r.hosts[2].name, "10.0.0.7");
  EXPECT_EQ(r.hosts[2].slots, 1);  // Open MPI: one slot when not stated
  EXPECT_EQ(statedSlots(r.hosts), 6);
}

TEST(HostList, Errors) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "empty --host list"},
      {"a:2,,b:2", "empty entry"},
      {"a:2,", "empty entry"},
      {",a", "empty entry"},
      {"a:0", "invalid slot count in --host entry 'a:0'"},
      {"a:-1", "invalid slot count"},
      {"a:x", "invalid slot count"},
      {"a:", "invalid slot count"},
      {"a:2:3", "invalid slot count"},
      {"a:99999999999", "invalid slot count"},
      {"bad host:2", "invalid host name 'bad host'"},
      {"-oops", "invalid host name '-oops'"},
      {"a;rm -rf /", "invalid host name"},
      {":2", "invalid host name ''"},
  };
  for (const Case& c : cases) {
    HostListResult r = parseHostList(c.text);
    EXPECT_FALSE(r.ok) << c.text;
    EXPECT_NE(r.error.find(c.message), std::string::npos) << c.text << ": " << r.error;
  }
}

TEST(HostList, Hostfile) {
  HostListResult r = parseHostfile("# cluster\n\nnodeA slots=2\n  nodeB slots=4 max_slots=8 # big\n"
                                   "nodeC\n");
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.hosts.size(), 3u);
  EXPECT_EQ(r.hosts[1].name, "nodeB");
  EXPECT_EQ(r.hosts[1].slots, 4);
  EXPECT_EQ(r.hosts[2].slots, 0);  // left to mpirun
  EXPECT_EQ(statedSlots(r.hosts), -1);
  r = parseHostfile("nodeA slots=2\nnodeB slots=two\n");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("hostfile line 2: cannot parse 'slots=two'"), std::string::npos) << r.error;
  r = parseHostfile("nodeA cpus=2\n");
  EXPECT_FALSE(r.ok);
  r = parseHostfile("# nothing\n\n");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("names no host"), std::string::npos) << r.error;
  r = readHostfile("/nonexistent/rrt-hostfile");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot read hostfile"), std::string::npos) << r.error;
}

LaunchPlan plan(std::vector<const char*> args, const LaunchEnv& env = LaunchEnv(),
                const HostListResult& hostfile = HostListResult()) {
  ParseResult r = parse(args);
  EXPECT_EQ(r.outcome, ParseOutcome::Run) << r.error;
  return planLaunch(r.options, "/bin/prog", env, hostfile);
}

std::vector<std::string> words(std::initializer_list<const char*> w) { return {w.begin(), w.end()}; }

TEST(Delegation, LocalByDefault) {
  LaunchPlan p = plan({"-n", "4", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Local);
  LaunchEnv inStep;  // a task of a Slurm step runs its own local job, never a nested srun
  inStep.slurmJob = inStep.slurmStep = true;
  p = plan({"-n", "4", "prog"}, inStep);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Local);
  LaunchEnv slurm;
  slurm.slurmJob = true;
  p = plan({"--launcher", "local", "-n", "4", "prog"}, slurm);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Local);
}

TEST(Delegation, MpirunCommand) {
  LaunchEnv env;
  env.mpirun = "mpirun.openmpi";
  env.rrtVariables = {"RRT_LOG", "RRT_TCP_IF"};
  LaunchPlan p = plan({"--host", "a:2,b:2", "-n", "4", "--bind-to", "core", "--tag-output",
                       "--timeout", "2.5", "-x", "RRT_TCP_IF=eth1", "--env", "V=a b", "prog",
                       "--flag", "x"},
                      env);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Mpirun);
  EXPECT_EQ(p.command.argv,
            words({"mpirun.openmpi", "-np", "4", "--host", "a:2,b:2", "--bind-to", "core",
                   "--tag-output", "--timeout", "3", "-x", "RRT_LOG", "-x", "RRT_TCP_IF=eth1",
                   "-x", "V=a b", "/bin/prog", "--flag", "x"}));
  EXPECT_TRUE(p.command.setEnv.empty());
  EXPECT_EQ(showCommand(p.command),
            "mpirun.openmpi -np 4 --host a:2,b:2 --bind-to core --tag-output --timeout 3 -x "
            "RRT_LOG -x RRT_TCP_IF=eth1 -x 'V=a b' /bin/prog --flag x");
  // -H adds to the list; --bind-to auto leaves binding to mpirun.
  p = plan({"-H", "a:2", "-H", "b", "-n", "3", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.command.argv, words({"mpirun", "-np", "3", "--host", "a:2,b", "/bin/prog"}));
  // Even inside a Slurm allocation, explicit hosts go to mpirun.
  LaunchEnv slurm;
  slurm.slurmJob = true;
  p = plan({"--host", "a:2", "-n", "2", "prog"}, slurm);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Mpirun);
}

TEST(Delegation, MpirunHostfile) {
  HostListResult hf = parseHostfile("a slots=2\nb slots=2\n");
  LaunchPlan p = plan({"--hostfile", "/h", "-n", "4", "--bind-to=none", "prog"}, LaunchEnv(), hf);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.command.argv, words({"mpirun", "-np", "4", "--hostfile", "/h", "--bind-to", "none",
                                   "/bin/prog"}));
  p = plan({"--hostfile", "/h", "-n", "5", "prog"}, LaunchEnv(), hf);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("the 4 slots"), std::string::npos) << p.error;
  HostListResult bad = parseHostfile("a slots=x\n");
  p = plan({"--hostfile", "/h", "-n", "1", "prog"}, LaunchEnv(), bad);
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("hostfile line 1"), std::string::npos) << p.error;
  // Without stated slots, mpirun decides.
  p = plan({"--hostfile", "/h", "-n", "64", "prog"}, LaunchEnv(), parseHostfile("a\nb\n"));
  EXPECT_TRUE(p.ok) << p.error;
}

TEST(Delegation, MpirunErrors) {
  LaunchPlan p = plan({"--host", "a:2,b:2", "-n", "5", "prog"});
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("-n 5 needs more than the 4 slots"), std::string::npos) << p.error;
  p = plan({"--host", "a:2,b:2", "--oversubscribe", "-n", "5", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.command.argv, words({"mpirun", "-np", "5", "--host", "a:2,b:2", "--oversubscribe",
                                   "/bin/prog"}));
  p = plan({"--host", "a:2,,b", "-n", "2", "prog"});
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("empty entry"), std::string::npos) << p.error;
  p = plan({"--launcher", "mpirun", "-n", "2", "prog"});
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("needs --host or --hostfile"), std::string::npos) << p.error;
  p = plan({"--launcher", "local", "--host", "a", "-n", "1", "prog"});
  EXPECT_FALSE(p.ok);
  p = plan({"--launcher", "srun", "-n", "2", "prog"});
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("SLURM_JOB_ID"), std::string::npos) << p.error;
}

TEST(Delegation, SrunCommand) {
  LaunchEnv slurm;
  slurm.slurmJob = true;
  slurm.rrtVariables = {"RRT_LOG"};  // srun forwards the whole environment itself
  LaunchPlan p = plan({"-n", "8", "--bind-to", "core", "--tag-output", "--timeout", "61",
                       "--oversubscribe", "-x", "A=1", "prog", "arg"},
                      slurm);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.kind, LaunchKind::Srun);
  EXPECT_EQ(p.command.argv, words({"srun", "--mpi=pmix", "-n", "8", "--cpu-bind=cores",
                                   "--overcommit", "--label", "--time=2", "/bin/prog", "arg"}));
  ASSERT_EQ(p.command.setEnv.size(), 1u);
  EXPECT_EQ(p.command.setEnv[0].first, "A");
  EXPECT_EQ(showCommand(p.command),
            "A=1 srun --mpi=pmix -n 8 --cpu-bind=cores --overcommit --label --time=2 /bin/prog arg");
  p = plan({"--launcher=srun", "--bind-to", "none", "-n", "2", "prog"}, slurm);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.command.argv, words({"srun", "--mpi=pmix", "-n", "2", "--cpu-bind=none", "/bin/prog"}));
}

TEST(Options, DelegationOptions) {
  ParseResult r = parse({"--host=a:1", "--hostfile", "/f", "--launcher=mpirun", "--dry-run",
                         "-n", "2", "prog"});
  ASSERT_EQ(r.outcome, ParseOutcome::Run) << r.error;
  EXPECT_EQ(r.options.hosts, "a:1");
  EXPECT_EQ(r.options.hostfile, "/f");
  EXPECT_EQ(r.options.launcher, LauncherChoice::Mpirun);
  EXPECT_TRUE(r.options.dryRun);
  EXPECT_EQ(parse({"--launcher", "ssh", "-n", "1", "prog"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "1", "--host"}).outcome, ParseOutcome::Error);
  EXPECT_EQ(parse({"-n", "1", "--hostfile=", "prog"}).outcome, ParseOutcome::Error);
}

TEST(UpcallQueue, EveryPushFromOtherThreadsArrivesOnceAndInOrder) {
  // As PMIx's threads push while the launcher's loop polls the fd and pops: nothing is lost
  // (the fd is readable whenever something is queued) and each thread's upcalls keep their order.
  UpcallQueue queue;
  ASSERT_TRUE(queue.valid());
  constexpr int kThreads = 3, kEach = 2000;
  std::vector<std::thread> pushers;
  for (int t = 0; t < kThreads; ++t)
    pushers.emplace_back([&queue, t] {
      for (int i = 0; i < kEach; ++i) {
        Upcall u;
        u.rank = static_cast<pmix_rank_t>(t);
        u.status = i;
        queue.push(std::move(u));
      }
    });
  std::vector<int> next(kThreads, 0);
  int received = 0;
  while (received < kThreads * kEach) {
    pollfd p{queue.fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 10000), 1) << "queued upcalls but the fd is not readable";
    for (const Upcall& u : queue.popAll()) {
      ASSERT_LT(u.rank, static_cast<pmix_rank_t>(kThreads));
      EXPECT_EQ(u.status, next[u.rank]++) << "out of order from thread " << u.rank;
      ++received;
    }
  }
  for (auto& t : pushers) t.join();
  EXPECT_TRUE(queue.popAll().empty());
}

}  // namespace
}  // namespace rrt::launcher

// Unit tests of rrun's pure parts: option parsing, program lookup, rank environment, exit codes,
// job file names, line forwarding.
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

#include "launcher/exec_path.h"
#include "launcher/job_files.h"
#include "launcher/job_map.h"
#include "launcher/options.h"
#include "launcher/output_forwarder.h"
#include "launcher/rank_env.h"
#include "launcher/rank_fate.h"

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

}  // namespace
}  // namespace rrt::launcher

// Fuzz target: rrun's command line (launcher/options.cc). The input is split at NUL bytes into
// argv[1..]; parseOptions must return Run, Help, Version or an Error with a message, and a Run
// must satisfy everything main() relies on.
#include <string>
#include <vector>

#include "launcher/options.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"rrun"};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty() || size == 0) args.push_back(cur);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  using rrt::launcher::ParseOutcome;
  rrt::launcher::ParseResult r =
      rrt::launcher::parseOptions(static_cast<int>(args.size()), argv.data());
  switch (r.outcome) {
    case ParseOutcome::Run:
      RRT_FUZZ_CHECK(r.options.nprocs >= 1 && r.options.nprocs <= (1 << 20));
      RRT_FUZZ_CHECK(!r.options.app.empty());
      RRT_FUZZ_CHECK(r.options.timeoutSeconds >= 0);
      for (const auto& kv : r.options.env) RRT_FUZZ_CHECK(!kv.first.empty());
      break;
    case ParseOutcome::Error:
      RRT_FUZZ_CHECK(!r.error.empty());
      break;
    case ParseOutcome::Help:
    case ParseOutcome::Version:
      break;
  }
  return 0;
}

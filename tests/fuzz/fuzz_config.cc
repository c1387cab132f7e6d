// Fuzz target: RRT_* configuration strings (runtime/core/config.cc). The first byte picks a
// tunable, the rest (up to a NUL) is its value in the environment; every typed accessor must
// return a value (falling back with a warning on garbage), and the parsers must agree with
// themselves: a size that parses is the number it spells.
#include <cstdlib>
#include <string>

#include "runtime/core/config.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 512) return 0;
  const int count = static_cast<int>(config::Tunable::Count);
  const auto t = static_cast<config::Tunable>(data[0] % count);
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  value = value.substr(0, value.find('\0'));  // an environment value ends at NUL

  uint64_t n = 0;
  if (config::parseSize(value, &n) == Status::Ok) {
    // Re-parse the plain number: suffixes only multiply.
    uint64_t again = 0;
    RRT_FUZZ_CHECK(!value.empty() && value[0] >= '0' && value[0] <= '9');
    RRT_FUZZ_CHECK(config::parseSize(std::to_string(n), &again) == Status::Ok && again == n);
  }
  bool b = false;
  (void)config::parseBool(value, &b);

  const std::string name = std::string("RRT_") + config::row(t).env;
  setenv(name.c_str(), value.c_str(), 1);
  config::reload();
  RRT_FUZZ_CHECK(config::value(t) == (value.empty() ? config::row(t).defValue : value));
  (void)config::sizeOr(t, 4096);
  (void)config::boolOr(t, true);
  const double d = config::doubleOr(t, 1.5);
  RRT_FUZZ_CHECK(d >= 0 && d <= 1e300);  // a finite, non-negative number, never NaN
  unsetenv(name.c_str());
  config::reload();
  return 0;
}

#include "runtime/core/config.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "runtime/core/log.h"

namespace rrt::config {
namespace {

constexpr int kCount = static_cast<int>(Tunable::Count);

const Row kRows[kCount] = {
#define RRT_TUNABLE(id, env, def, help) {env, def, help},
#include "runtime/core/config_table.h"
#undef RRT_TUNABLE
};

struct Values {
  std::string value[kCount];
  bool fromEnv[kCount] = {};
  Values() { load(); }
  void load() {
    for (int i = 0; i < kCount; ++i) {
      std::string name = std::string("RRT_") + kRows[i].env;
      const char* v = getenv(name.c_str());
      fromEnv[i] = v != nullptr && *v != '\0';
      value[i] = fromEnv[i] ? v : kRows[i].defValue;
    }
  }
};

Values& values() {
  static Values v;
  return v;
}

}  // namespace

const Row& row(Tunable t) { return kRows[static_cast<int>(t)]; }
void reload() { values().load(); }
const std::string& value(Tunable t) { return values().value[static_cast<int>(t)]; }
bool fromEnvironment(Tunable t) { return values().fromEnv[static_cast<int>(t)]; }
bool isAuto(Tunable t) { return strcasecmp(value(t).c_str(), "auto") == 0; }

Status parseSize(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return Status::ErrArg;  // no sign, no blanks
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str()) return Status::ErrArg;
  unsigned shift = 0;
  if (*end != '\0') {
    switch (*end) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return Status::ErrArg;
    }
    ++end;
    if (*end == 'i' || *end == 'I') ++end;
    if (*end == 'b' || *end == 'B') ++end;
    if (*end != '\0') return Status::ErrArg;
  }
  if (shift && v > (~0ull >> shift)) return Status::ErrArg;
  *out = v << shift;
  return Status::Ok;
}

Status parseBool(const std::string& s, bool* out) {
  static const char* const kTrue[] = {"1", "on", "yes", "true", "y"};
  static const char* const kFalse[] = {"0", "off", "no", "false", "n"};
  for (const char* t : kTrue)
    if (strcasecmp(s.c_str(), t) == 0) return *out = true, Status::Ok;
  for (const char* f : kFalse)
    if (strcasecmp(s.c_str(), f) == 0) return *out = false, Status::Ok;
  return Status::ErrArg;
}

uint64_t sizeOr(Tunable t, uint64_t autoValue) {
  if (isAuto(t)) return autoValue;
  uint64_t v = 0;
  if (parseSize(value(t), &v) != Status::Ok) {
    RRT_WARN("RRT_%s=%s is not a size; using %llu", row(t).env, value(t).c_str(),
             static_cast<unsigned long long>(autoValue));
    return autoValue;
  }
  return v;
}

bool boolOr(Tunable t, bool autoValue) {
  if (isAuto(t)) return autoValue;
  bool v = false;
  if (parseBool(value(t), &v) != Status::Ok) {
    RRT_WARN("RRT_%s=%s is not on/off; using %s", row(t).env, value(t).c_str(),
             autoValue ? "on" : "off");
    return autoValue;
  }
  return v;
}

double doubleOr(Tunable t, double autoValue) {
  if (isAuto(t)) return autoValue;
  char* end = nullptr;
  double v = strtod(value(t).c_str(), &end);
  if (end == value(t).c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {  // no nan, inf
    RRT_WARN("RRT_%s=%s is not a number; using %g", row(t).env, value(t).c_str(), autoValue);
    return autoValue;
  }
  return v;
}

}  // namespace rrt::config

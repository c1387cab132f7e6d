// The tunables (config_table.h) read once from the environment.
//
// Each row of config_table.h becomes a Tunable id; its value comes from RRT_<NAME> when set,
// else the default. Values are parsed on access by the typed helpers; "auto" is a value the
// caller resolves. Read at init (and in unit tests after reload()); never on the fast path:
// callers cache what they need.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace rrt::config {

enum class Tunable : int {
#define RRT_TUNABLE(id, env, def, help) id,
#include "runtime/core/config_table.h"
#undef RRT_TUNABLE
  Count
};

struct Row {
  const char* env;       // without the RRT_ prefix
  const char* defValue;
  const char* help;
};

const Row& row(Tunable t);
// Re-reads the environment (tests set variables, then reload).
void reload();

const std::string& value(Tunable t);    // the string in force
bool fromEnvironment(Tunable t);        // set by the user rather than defaulted
bool isAuto(Tunable t);                 // value is "auto"

// Parses sizes like 4096, 64K, 2M, 1G. Fails on anything else (and negative numbers).
Status parseSize(const std::string& s, uint64_t* out);
// Parses on/off/1/0/yes/no/true/false.
Status parseBool(const std::string& s, bool* out);

// Typed access with a fallback for "auto" (and a logged warning for garbage).
uint64_t sizeOr(Tunable t, uint64_t autoValue);
bool boolOr(Tunable t, bool autoValue);
double doubleOr(Tunable t, double autoValue);

}  // namespace rrt::config

#include "launcher/rank_env.h"

namespace rrt::launcher {
namespace {

std::string nameOf(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

bool isStalePmixVariable(const std::string& name) {
  return name.rfind("PMIX_", 0) == 0 && name.rfind("PMIX_MCA_", 0) != 0;
}

void setEnvEntry(EnvList* env, const std::string& name, const std::string& value) {
  for (auto& entry : *env) {
    if (nameOf(entry) == name) {
      entry = name + "=" + value;
      return;
    }
  }
  env->push_back(name + "=" + value);
}

const std::string* findEnvEntry(const EnvList& env, const std::string& name) {
  for (const auto& entry : env) {
    if (nameOf(entry) == name) return &entry;
  }
  return nullptr;
}

EnvList buildRankEnv(const char* const* inherited,
                     const std::vector<std::pair<std::string, std::string>>& overrides) {
  EnvList env;
  for (const char* const* p = inherited; p && *p; ++p) {
    std::string entry = *p;
    if (entry.find('=') == std::string::npos) continue;
    if (isStalePmixVariable(nameOf(entry))) continue;
    env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : overrides) setEnvEntry(&env, name, value);
  if (!findEnvEntry(env, "PMIX_MCA_gds")) setEnvEntry(&env, "PMIX_MCA_gds", "hash");
  return env;
}

}  // namespace rrt::launcher

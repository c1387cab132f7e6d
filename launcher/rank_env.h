// The ranks' base environment: the launcher's own, cleaned of stale PMIx state, plus -x/--env.
//
// Inherited PMIX_* variables (other than PMIX_MCA_* settings) describe some outer PMIx job; a
// stale PMIX_NAMESPACE or server URI makes a client's PMIx_Init fail or hang, so they are
// removed. PMIX_MCA_gds defaults to "hash" (the shared-memory store is slower and can keep a lock
// held after a failed registration). PMIx_server_setup_fork later adds this job's own PMIX_*.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rrt::launcher {

using EnvList = std::vector<std::string>;  // "NAME=VALUE" entries, unique names

// True for names the launcher must not pass on from an outer environment.
bool isStalePmixVariable(const std::string& name);

// Builds the environment from `inherited` (a NULL-terminated environ-style array).
EnvList buildRankEnv(const char* const* inherited,
                     const std::vector<std::pair<std::string, std::string>>& overrides);

// Sets NAME=VALUE in `env`, replacing an existing entry.
void setEnvEntry(EnvList* env, const std::string& name, const std::string& value);

// The value of NAME in `env`, or nullptr.
const std::string* findEnvEntry(const EnvList& env, const std::string& name);

}  // namespace rrt::launcher

// Resolving the program to run, the way execvp would, before anything is started.
//
// A name containing '/' is used as given; otherwise each PATH entry is tried in order (an empty
// entry means the current directory; PATH unset means "/usr/local/bin:/usr/bin:/bin"). The result
// is a regular file the caller may execute. Errors are returned as text for the usage message.
#pragma once

#include <string>

namespace rrt::launcher {

struct ResolvedProgram {
  bool ok = false;
  std::string path;   // when ok
  std::string error;  // when !ok, e.g. "foo: command not found"
};

ResolvedProgram resolveProgram(const std::string& name, const char* pathEnv);

}  // namespace rrt::launcher

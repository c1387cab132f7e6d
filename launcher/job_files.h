// Files a job leaves on the node, and their removal.
//
// The runtime names its shared-memory segments /dev/shm/rrt-<jobId>*, where jobId is the PMIx
// namespace with every character outside [A-Za-z0-9_.-] replaced by '_'. rrun removes them at the
// end of every job (also when a rank crashed before unlinking them), together with the job's
// private PMIx temp directory. The namespace rrun chooses ends in a fixed-length suffix, so the
// prefix of one job never matches another job's names.
#pragma once

#include <string>

namespace rrt::launcher {

constexpr const char* kShmDir = "/dev/shm";

std::string jobIdFromNamespace(const std::string& nspace);

// A namespace unique on this node: "rrun-<pid>-<8 hex digits>".
std::string makeNamespace();

// Removes dir/rrt-<jobId>*; returns how many entries were removed.
int removeJobSegments(const std::string& jobId, const std::string& dir = kShmDir);

// Removes a directory tree (no symlinks followed). Missing is fine.
void removeTree(const std::string& path);

// Creates a private temp dir "<TMPDIR or /tmp>/<name>-XXXXXX"; "" on failure.
std::string makeTempDir(const std::string& name);

}  // namespace rrt::launcher

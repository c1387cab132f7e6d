#include "launcher/job_files.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace rrt::launcher {

std::string jobIdFromNamespace(const std::string& nspace) {
  std::string id = nspace;
  for (char& c : id) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return id;
}

std::string makeNamespace() {
  unsigned int salt = 0;
  if (getrandom(&salt, sizeof salt, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof salt)) {
    salt = static_cast<unsigned int>(time(nullptr)) ^ static_cast<unsigned int>(clock());
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "rrun-%ld-%08x", static_cast<long>(getpid()), salt);
  return buf;
}

int removeJobSegments(const std::string& jobId, const std::string& dir) {
  const std::string prefix = "rrt-" + jobId;
  DIR* d = opendir(dir.c_str());
  if (!d) return 0;
  std::vector<std::string> doomed;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) doomed.push_back(dir + "/" + name);
  }
  closedir(d);
  int removed = 0;
  for (const auto& path : doomed) {
    if (unlink(path.c_str()) == 0) ++removed;
  }
  return removed;
}

namespace {
int removeEntry(const char* path, const struct stat*, int type, struct FTW*) {
  if (type == FTW_DP) {
    rmdir(path);
  } else {
    unlink(path);
  }
  return 0;
}
}  // namespace

void removeTree(const std::string& path) {
  if (path.empty()) return;
  nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
}

std::string makeTempDir(const std::string& name) {
  const char* env = std::getenv("TMPDIR");
  std::vector<std::string> bases;
  if (env && *env) bases.emplace_back(env);
  bases.emplace_back("/tmp");
  for (const auto& base : bases) {
    std::string tmpl = base + "/" + name + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) return buf.data();
  }
  return "";
}

}  // namespace rrt::launcher

#include "launcher/host_list.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rrt::launcher {
namespace {

constexpr long kMaxSlots = 1 << 20;

bool validHostName(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '-') return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
      return false;
  }
  return true;
}

bool parseSlots(const std::string& text, int* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > kMaxSlots) return false;
  *out = static_cast<int>(v);
  return true;
}

HostListResult fail(std::string message) {
  HostListResult r;
  r.error = std::move(message);
  return r;
}

}  // namespace

HostListResult parseHostList(const std::string& text) {
  HostListResult r;
  if (text.empty()) return fail("empty --host list");
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string entry = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (entry.empty()) return fail("empty entry in --host list '" + text + "'");
    HostSlots h;
    std::size_t colon = entry.find(':');
    h.name = entry.substr(0, colon);
    h.slots = 1;
    if (!validHostName(h.name)) return fail("invalid host name '" + h.name + "' in --host");
    if (colon != std::string::npos && !parseSlots(entry.substr(colon + 1), &h.slots)) {
      return fail("invalid slot count in --host entry '" + entry +
                  "' (want NAME:N with N a positive integer)");
    }
    r.hosts.push_back(h);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  r.ok = true;
  return r;
}

HostListResult parseHostfile(const std::string& text) {
  HostListResult r;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string where = "hostfile line " + std::to_string(lineno);
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    HostSlots h;
    h.name = word;
    if (!validHostName(h.name)) return fail(where + ": invalid host name '" + h.name + "'");
    while (words >> word) {
      std::size_t eq = word.find('=');
      std::string key = word.substr(0, eq);
      int n = 0;
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "max-slots") ||
          !parseSlots(word.substr(eq + 1), &n)) {
        return fail(where + ": cannot parse '" + word + "' (want slots=N or max_slots=N)");
      }
      if (key == "slots") h.slots = n;
    }
    r.hosts.push_back(h);
  }
  if (r.hosts.empty()) return fail("the hostfile names no host");
  r.ok = true;
  return r;
}

HostListResult readHostfile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return fail("cannot read hostfile '" + path + "'");
  std::ostringstream text;
  text << f.rdbuf();
  HostListResult r = parseHostfile(text.str());
  if (!r.ok) r.error = path + ": " + r.error;
  return r;
}

long statedSlots(const std::vector<HostSlots>& hosts) {
  long total = 0;
  for (const HostSlots& h : hosts) {
    if (h.slots <= 0) return -1;
    total += h.slots;
  }
  return total;
}

}  // namespace rrt::launcher

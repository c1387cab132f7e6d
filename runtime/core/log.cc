#include "runtime/core/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <strings.h>
#include <unistd.h>

#include "runtime/core/config.h"

namespace rrt::log {

Level gLevel = Level::Error;
namespace {
int gRank = -1;
const char* const kNames[] = {"error", "warn", "info", "debug", "trace"};
}  // namespace

void setRank(int rank) { gRank = rank; }

void init() {
  const std::string& v = config::value(config::Tunable::Log);
  for (int i = 0; i < 5; ++i)
    if (strcasecmp(v.c_str(), kNames[i]) == 0) gLevel = static_cast<Level>(i);
}

void write(Level level, const char* fmt, ...) {
  char line[1024];
  int n = gRank >= 0 ? snprintf(line, sizeof line, "[rrt %d] %s: ", gRank, kNames[int(level)])
                     : snprintf(line, sizeof line, "[rrt] %s: ", kNames[int(level)]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  va_end(ap);
  size_t len = n + (m < 0 ? 0 : static_cast<size_t>(m));
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  // One write so lines from several ranks do not interleave.
  ssize_t rc = ::write(2, line, len);
  (void)rc;
}

}  // namespace rrt::log

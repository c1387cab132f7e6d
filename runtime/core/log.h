// Logging: one line per event, "[rrt <rank>] <level>: message", to stderr.
// The level comes from RRT_LOG (error, warn, info, debug, trace). Checking the level is one
// load and compare, so disabled levels cost nothing measurable on the fast path.
#pragma once

namespace rrt::log {

enum class Level : int { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

extern Level gLevel;
void setRank(int rank);
void init();  // reads RRT_LOG
void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

inline bool enabled(Level l) { return static_cast<int>(l) <= static_cast<int>(gLevel); }

}  // namespace rrt::log

#define RRT_LOG_AT(lvl, ...)                                                    \
  do {                                                                          \
    if (::rrt::log::enabled(lvl)) ::rrt::log::write(lvl, __VA_ARGS__);         \
  } while (0)
#define RRT_ERROR(...) RRT_LOG_AT(::rrt::log::Level::Error, __VA_ARGS__)
#define RRT_WARN(...) RRT_LOG_AT(::rrt::log::Level::Warn, __VA_ARGS__)
#define RRT_INFO(...) RRT_LOG_AT(::rrt::log::Level::Info, __VA_ARGS__)
#define RRT_DEBUG(...) RRT_LOG_AT(::rrt::log::Level::Debug, __VA_ARGS__)
#define RRT_TRACE(...) RRT_LOG_AT(::rrt::log::Level::Trace, __VA_ARGS__)

// StdinForwarder: copies the launcher's stdin to rank 0's stdin pipe.
//
// Reads the source only while less than kMaxBuffered bytes wait for rank 0, so a rank that never
// reads cannot make the launcher grow without bound. The source is never made non-blocking (its
// file description may be shared); it is read once per poll() readiness. When the source ends
// and everything is written, rank 0 sees EOF. A source that is a terminal of which the launcher
// is not the foreground process group is not read (that would stop the launcher with SIGTTIN).
// Owns the pipe's write end (non-blocking).
#pragma once

#include <string>

namespace rrt::launcher {

class StdinForwarder {
 public:
  static constexpr std::size_t kMaxBuffered = 64 * 1024;

  StdinForwarder(int sourceFd, int pipeFd);
  ~StdinForwarder();
  StdinForwarder(const StdinForwarder&) = delete;
  StdinForwarder& operator=(const StdinForwarder&) = delete;

  // The fds to poll now (-1: none) and the events.
  int sourceFdToPoll() const;
  int pipeFdToPoll() const;
  void onSourceReadable();
  void onPipeWritable();
  // Rank 0 is gone: stop forwarding.
  void close();

 private:
  void closePipe();

  int sourceFd_;
  int pipeFd_;
  bool sourceOpen_;
  std::string buffer_;
};

}  // namespace rrt::launcher

// OutputForwarder: copies one rank stream (stdout or stderr pipe) to the launcher's fd, by lines.
//
// Whole lines are written at once (with "[rank] " in front when tagging), so lines of different
// ranks never interleave mid-line. A partial last line is written when the pipe closes (followed by
// a newline only when tagging, so the next tag starts a line); a line longer than kMaxLine is
// written in pieces. Owns the pipe's read end (non-blocking). If the destination is gone (EPIPE),
// output is read and dropped so ranks never block on a full pipe.
#pragma once

#include <string>

namespace rrt::launcher {

class OutputForwarder {
 public:
  static constexpr std::size_t kMaxLine = 64 * 1024;

  OutputForwarder(int pipeFd, int destFd, int rank, bool tag);
  ~OutputForwarder();
  OutputForwarder(OutputForwarder&& other) noexcept;
  OutputForwarder& operator=(OutputForwarder&&) = delete;
  OutputForwarder(const OutputForwarder&) = delete;
  OutputForwarder& operator=(const OutputForwarder&) = delete;

  int fd() const { return pipeFd_; }  // -1 once closed
  bool open() const { return pipeFd_ >= 0; }
  // Reads what is available; closes on EOF or error (flushing a partial line).
  void onReadable();
  // Flushes a partial line and closes the pipe (end of job).
  void close();

 private:
  void emit(const char* data, std::size_t len, bool addNewline);

  int pipeFd_;
  int destFd_;
  std::string prefix_;
  std::string pending_;
};

// Writes all of buf to fd, waiting (bounded) on a non-blocking fd. False if the fd is gone.
bool writeFully(int fd, const char* buf, std::size_t len);

}  // namespace rrt::launcher

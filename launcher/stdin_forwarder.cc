#include "launcher/stdin_forwarder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace rrt::launcher {

StdinForwarder::StdinForwarder(int sourceFd, int pipeFd) : sourceFd_(sourceFd), pipeFd_(pipeFd) {
  sourceOpen_ = fcntl(sourceFd_, F_GETFL) >= 0;
  if (sourceOpen_ && isatty(sourceFd_) && tcgetpgrp(sourceFd_) != getpgrp()) sourceOpen_ = false;
  if (!sourceOpen_) closePipe();
}

StdinForwarder::~StdinForwarder() { closePipe(); }

int StdinForwarder::sourceFdToPoll() const {
  return sourceOpen_ && pipeFd_ >= 0 && buffer_.size() < kMaxBuffered ? sourceFd_ : -1;
}

int StdinForwarder::pipeFdToPoll() const { return !buffer_.empty() ? pipeFd_ : -1; }

void StdinForwarder::onSourceReadable() {
  char buf[16384];
  ssize_t n;
  do {
    n = read(sourceFd_, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  if (n <= 0) {
    sourceOpen_ = false;
    if (buffer_.empty()) closePipe();
    return;
  }
  buffer_.append(buf, static_cast<std::size_t>(n));
  onPipeWritable();
}

void StdinForwarder::onPipeWritable() {
  while (!buffer_.empty() && pipeFd_ >= 0) {
    ssize_t n = write(pipeFd_, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // EPIPE: rank 0 closed its stdin
      close();
      return;
    }
    buffer_.erase(0, static_cast<std::size_t>(n));
  }
  if (buffer_.empty() && !sourceOpen_) closePipe();
}

void StdinForwarder::close() {
  sourceOpen_ = false;
  buffer_.clear();
  closePipe();
}

void StdinForwarder::closePipe() {
  if (pipeFd_ >= 0) ::close(pipeFd_);
  pipeFd_ = -1;
}

}  // namespace rrt::launcher

#include "launcher/output_forwarder.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rrt::launcher {

bool writeFully(int fd, const char* buf, std::size_t len) {
  int stalls = 0;
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n > 0) {
      buf += n;
      len -= static_cast<std::size_t>(n);
      stalls = 0;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && ++stalls < 600) {  // a reader that stalls 60 s is gone
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 100);
      continue;
    }
    return false;
  }
  return true;
}

OutputForwarder::OutputForwarder(int pipeFd, int destFd, int rank, bool tag)
    : pipeFd_(pipeFd), destFd_(destFd) {
  if (tag) prefix_ = "[" + std::to_string(rank) + "] ";
}

OutputForwarder::OutputForwarder(OutputForwarder&& other) noexcept
    : pipeFd_(other.pipeFd_),
      destFd_(other.destFd_),
      prefix_(std::move(other.prefix_)),
      pending_(std::move(other.pending_)) {
  other.pipeFd_ = -1;
}

OutputForwarder::~OutputForwarder() {
  if (pipeFd_ >= 0) ::close(pipeFd_);
}

void OutputForwarder::emit(const char* data, std::size_t len, bool addNewline) {
  if (destFd_ < 0) return;
  std::string out;
  out.reserve(prefix_.size() + len + 1);
  out += prefix_;
  out.append(data, len);
  if (addNewline) out += '\n';
  if (!writeFully(destFd_, out.data(), out.size())) destFd_ = -1;  // reader gone: drop the rest
}

void OutputForwarder::onReadable() {
  char buf[16384];
  for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: other fds get their turn
    ssize_t n = read(pipeFd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      close();
      return;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
    // Write whole lines; for tagging each line needs its own prefix.
    std::size_t start = 0;
    if (prefix_.empty()) {
      std::size_t last = pending_.rfind('\n');
      if (last != std::string::npos) {
        emit(pending_.data(), last + 1, false);
        start = last + 1;
      }
    } else {
      std::size_t nl;
      while ((nl = pending_.find('\n', start)) != std::string::npos) {
        emit(pending_.data() + start, nl + 1 - start, false);
        start = nl + 1;
      }
    }
    pending_.erase(0, start);
    if (pending_.size() >= kMaxLine) {
      emit(pending_.data(), pending_.size(), !prefix_.empty());
      pending_.clear();
    }
  }
}

void OutputForwarder::close() {
  if (!pending_.empty()) {
    emit(pending_.data(), pending_.size(), !prefix_.empty());
    pending_.clear();
  }
  if (pipeFd_ >= 0) ::close(pipeFd_);
  pipeFd_ = -1;
}

}  // namespace rrt::launcher

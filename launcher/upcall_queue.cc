#include "launcher/upcall_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace rrt::launcher {

UpcallQueue::UpcallQueue() { fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

UpcallQueue::~UpcallQueue() {
  if (fd_ >= 0) close(fd_);
}

void UpcallQueue::push(Upcall upcall) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(upcall));
  }
  uint64_t one = 1;
  // A full counter (never reached) or EAGAIN still leaves the fd readable: nothing is lost.
  ssize_t n = write(fd_, &one, sizeof one);
  (void)n;
}

std::vector<Upcall> UpcallQueue::popAll() {
  uint64_t count;
  ssize_t n = read(fd_, &count, sizeof count);  // resets the counter; EAGAIN when already zero
  (void)n;
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Upcall> out(std::make_move_iterator(queue_.begin()),
                          std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

}  // namespace rrt::launcher

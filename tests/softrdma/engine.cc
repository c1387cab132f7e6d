#include "tests/softrdma/engine.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/softrdma/cq.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/requester.h"
#include "tests/softrdma/responder.h"

namespace rrt::tests::softrdma {
namespace {

constexpr std::chrono::microseconds kStandAside(1000);

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

thread_local bool tProgressThread = false;

std::mutex gLifecycle;
Engine* gEngine = nullptr;

socklen_t addressOf(pid_t pid, sockaddr_un* address) {
  static const unsigned uid = static_cast<unsigned>(getuid());  // not a system call per packet
  std::memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  // Abstract namespace: nothing to unlink, vanishes with the process.
  int n = std::snprintf(address->sun_path + 1, sizeof address->sun_path - 1, "softrdma-%u-%d",
                        uid, static_cast<int>(pid));
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

}  // namespace

Engine& Engine::acquire() {
  std::lock_guard<std::mutex> guard(gLifecycle);
  if (!gEngine) gEngine = new Engine();
  ++gEngine->users_;
  return *gEngine;
}

void Engine::release() {
  std::lock_guard<std::mutex> guard(gLifecycle);
  if (!gEngine || --gEngine->users_ > 0) return;
  delete gEngine;
  gEngine = nullptr;
}

Engine& Engine::get() {
  if (!gEngine) die("Engine::get", "device not open");
  return *gEngine;
}

Engine::Engine() : self_(getpid()) {
  const char* spin = std::getenv("SOFTRDMA_SPIN_US");
  spin_ = std::chrono::microseconds(spin ? std::atol(spin) : 20);
  socket_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (socket_ < 0) die("ibv_open_device", "socket: %s", std::strerror(errno));
  sockaddr_un address;
  socklen_t length = addressOf(self_, &address);
  if (bind(socket_, reinterpret_cast<sockaddr*>(&address), length) != 0)
    die("ibv_open_device", "bind: %s", std::strerror(errno));
  int size = 4 << 20;
  setsockopt(socket_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(socket_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  buffer_.resize(kMaxDatagramBytes + 4096);
  wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wakeFd_ < 0) die("ibv_open_device", "eventfd: %s", std::strerror(errno));
  thread_ = std::thread([this] { progressLoop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stop_ = true;
  }
  uint64_t one = 1;
  if (write(wakeFd_, &one, sizeof one) < 0) {
    // the thread also notices stop_ at its next wake-up
  }
  thread_.join();
  close(socket_);
  close(wakeFd_);
}

void Engine::send(pid_t pid, const PacketHeader& header, const WireSge* sges) {
  std::vector<char>& out = outbox_[pid];
  const char* h = reinterpret_cast<const char*>(&header);
  out.insert(out.end(), h, h + sizeof header);
  const char* s = reinterpret_cast<const char*>(sges);
  out.insert(out.end(), s, s + header.numSge * sizeof(WireSge));
}

void Engine::flush() {
  std::vector<std::vector<char>> gone;
  for (auto it = outbox_.begin(); it != outbox_.end();) {
    std::vector<char>& out = it->second;
    sockaddr_un address;
    socklen_t length = addressOf(it->first, &address);
    size_t done = 0;
    bool dead = false;
    while (done < out.size()) {
      // Whole packets, at most kMaxDatagramBytes per datagram.
      size_t chunk = 0;
      while (done + chunk < out.size()) {
        uint32_t size;
        std::memcpy(&size, out.data() + done + chunk, sizeof size);
        if (chunk > 0 && chunk + size > kMaxDatagramBytes) break;
        chunk += size;
      }
      ssize_t n = sendto(socket_, out.data() + done, chunk, MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&address), length);
      if (n == static_cast<ssize_t>(chunk)) {
        done += chunk;
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) break;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == ECONNREFUSED || errno == ENOENT)) {
        dead = true;
        break;
      }
      die("Engine::flush", "sendto pid %d: %s", static_cast<int>(it->first),
          n < 0 ? std::strerror(errno) : "short datagram");
    }
    if (dead) {
      gone.emplace_back(out.begin() + done, out.end());
      done = out.size();
    }
    out.erase(out.begin(), out.begin() + done);
    it = out.empty() ? outbox_.erase(it) : std::next(it);
  }
  for (const std::vector<char>& packets : gone) peerGone(packets);
  if (!outbox_.empty()) {
    wake();  // the progress thread retries
    return;
  }
  for (const Deferred& d : deferred_) pushCompletion(*d.cq, d.wc, d.solicited);
  deferred_.clear();
}

void Engine::wake() {
  if (tProgressThread) return;  // it recomputes its deadlines anyway
  uint64_t one = 1;
  if (write(wakeFd_, &one, sizeof one) < 0) {
    // EAGAIN: the counter is already non-zero, a wake-up is pending
  }
}

void Engine::peerGone(const std::vector<char>& packets) {
  // Requests to a process that no longer exists: the requester would time out on hardware.
  for (size_t at = 0; at < packets.size();) {
    PacketHeader header;
    std::memcpy(&header, packets.data() + at, sizeof header);
    if (header.op != PacketOp::kAck) requesterPeerUnreachable(*this, header.srcQpn, header.psn);
    at += header.size;
  }
}

void Engine::dispatch(const char* data, size_t length) {
  for (size_t at = 0; at + sizeof(PacketHeader) <= length;) {
    PacketHeader header;
    std::memcpy(&header, data + at, sizeof header);
    if (header.size < sizeof header || at + header.size > length || header.numSge > kMaxSge ||
        header.size != sizeof header + header.numSge * sizeof(WireSge))
      die("Engine::dispatch", "malformed packet from pid %d", header.srcPid);
    WireSge sges[kMaxSge];
    std::memcpy(sges, data + at + sizeof header, header.numSge * sizeof(WireSge));
    if (header.op == PacketOp::kAck)
      requesterHandleAck(*this, header);
    else
      responderHandleRequest(*this, header, sges);
    at += header.size;
  }
}

bool Engine::drain() {
  bool any = false;
  for (int i = 0; i < 64; ++i) {
    ssize_t n = recv(socket_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n > 0) {
      dispatch(buffer_.data(), static_cast<size_t>(n));
      any = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      die("Engine::drain", "recv: %s", std::strerror(errno));
    break;
  }
  if (any) flush();
  return any;
}

void Engine::pollFromApplication() {
  Engine* engine = gEngine;
  if (!engine) return;
  engine->lastApplicationPoll_.store(nowNs(), std::memory_order_relaxed);
  if (!engine->lock_.try_lock()) return;
  engine->drain();
  requesterRunTimers(*engine, std::chrono::steady_clock::now());
  engine->flush();
  engine->lock_.unlock();
}

void Engine::progressLoop() {
  tProgressThread = true;
  pollfd fds[2] = {{socket_, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
  using Clock = std::chrono::steady_clock;
  for (;;) {
    timespec timeout{};
    timespec* wait = nullptr;
    {
      std::lock_guard<std::mutex> guard(lock_);
      if (stop_) return;
      Clock::time_point now = Clock::now();
      Clock::time_point next = requesterRunTimers(*this, now);
      flush();
      if (!outbox_.empty()) next = std::min(next, now + std::chrono::microseconds(100));
      if (next != Clock::time_point::max()) {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next - now).count();
        if (ns < 0) ns = 0;
        timeout.tv_sec = ns / 1000000000;
        timeout.tv_nsec = ns % 1000000000;
        wait = &timeout;
      }
    }
    bool applicationPolls =
        nowNs() - lastApplicationPoll_.load(std::memory_order_relaxed) <
        std::chrono::nanoseconds(kStandAside).count();
    if (applicationPolls) {
      // Leave the socket to the polling thread; look again after kStandAside.
      auto ns = std::chrono::nanoseconds(kStandAside).count();
      if (!wait || timeout.tv_sec > 0 || timeout.tv_nsec > ns) timeout = {0, ns};
      wait = &timeout;
    }
    fds[0].fd = applicationPolls ? -1 : socket_;
    fds[0].revents = 0;
    if (ppoll(fds, 2, wait, nullptr) < 0 && errno != EINTR)
      die("Engine::progressLoop", "ppoll: %s", std::strerror(errno));
    if (fds[1].revents) {
      uint64_t value;
      if (read(wakeFd_, &value, sizeof value) < 0) {
        // EAGAIN: another wake-up consumed it
      }
    }
    // Receive and dispatch under the lock, so that packets are handled in arrival order even
    // when an application thread drains too; keep trying for spin_ after the last packet.
    Clock::time_point spinEnd = Clock::now() + spin_;
    for (;;) {
      bool any;
      {
        std::lock_guard<std::mutex> guard(lock_);
        if (stop_) return;
        any = drain();
      }
      if (any)
        spinEnd = Clock::now() + spin_;
      else if (nowNs() - lastApplicationPoll_.load(std::memory_order_relaxed) <
               std::chrono::nanoseconds(kStandAside).count())
        break;
      else if (Clock::now() >= spinEnd)
        break;
      else
        sched_yield();
    }
  }
}

void postAsyncEvent(Context& ctx, ibv_event_type type, void* element) {
  ibv_async_event event{};
  event.event_type = type;
  switch (type) {
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      event.element.srq = static_cast<ibv_srq*>(element);
      break;
    case IBV_EVENT_QP_LAST_WQE_REACHED:
    case IBV_EVENT_QP_FATAL:
      event.element.qp = static_cast<ibv_qp*>(element);
      break;
    default:
      event.element.port_num = kPortNum;
      break;
  }
  if (write(ctx.asyncWriteFd, &event, sizeof event) != sizeof event)
    std::fprintf(stderr, "softrdma: async event queue full, event %d dropped\n", type);
}

}  // namespace rrt::tests::softrdma

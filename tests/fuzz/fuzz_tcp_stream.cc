// Fuzz target: what arrives on a TCP connection of the tcp transport (runtime/transport/tcp/
// frame.h): the 64-byte Hello of the handshake, then AM and PUT frames. Every input gets a
// fresh transport (rank 0 of a job of two, loopback, a known secret) and one real loopback
// connection played by the harness as "rank 1", from either end:
//   - accepting side: the harness connects to the transport's listening port and writes a
//     Hello and frames (onAccept / onIncoming / checkHello, then parseFrames);
//   - connecting side: the transport connects to the harness (an amSend to rank 1 opens it),
//     which answers the transport's Hello with its own (onHelloReply: verdict, checks), then
//     writes frames. The transport runs two streams per pair (RRT_TCP_STREAMS=2, set here
//     whatever the default): when the harness's Hello asks for more than one, the transport,
//     the opener, also connects a stripe stream to the harness's listener (startStripe,
//     onStripeConnectEvent); the harness checks its Hello and answers it or not.
// The harness then closes its write side; whatever it sent, the transport must close the
// connection (a peer that hangs up is dead), never crash, never write outside the region it
// registered (a 64 KiB heap buffer, exact size for ASan), and hand the AM handler only whole
// frames. When the Hello was valid, the AMs of the well-formed frames before the first
// malformed one arrive in order and intact.
//
// Input: byte 0 bit 0: 0 accepting side, 1 connecting side; connecting side, bit 1: the
// harness answers stripe Hellos (with its own Hello naming the stream), else leaves them
// unanswered; bit 2: the answer names stream 0 (a wrong stream); bit 3 (with bit 1, not 2): the
// PUT frames travel on the stripe stream once it is up (readStripe; stripe marks from raw and
// header operations on stream 0 then wait for them). Byte 1: the Hello: bit 7 set, the
// next 64 bytes are the Hello as sent; else a valid Hello with (byte 1 & 7) byte edits
// (offset, value) applied. Then frame operations, one opcode byte each (% 4):
//   0 AM       id, 16-bit length, that many payload bytes (zeros past the input's end)
//   1 PUT      flags (bit 0: a made-up cookie, 8 bytes follow), 16-bit offset into the
//              region, 16-bit length, then that many payload bytes
//   2 raw      count, then that many bytes written as they are
//   3 header   a FrameHeader with a 32-bit length, kind and id from the input, nothing after it
// The stream stops growing at 1 MiB. At the hang-up the harness also closes its stripe streams
// and listener: after a malformed frame at once (a stripe mark may hold stream 0 until the
// stripes bring their bytes; or earlier, once the stripe stream's PUT frames are out and
// stream 0 takes nothing), else once the transport closed stream 0.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/transport/tcp/address.h"
#include "runtime/transport/tcp/frame.h"
#include "runtime/transport/tcp/tcp_transport.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;
using namespace rrt::transport::tcp;

namespace {

constexpr size_t kRegion = 64 << 10;
constexpr size_t kMaxStream = 1 << 20;
constexpr char kSecretByte = '\x3c';
// Spins of the harness loop before a transport that neither reads nor closes counts as hung
// (each spin is one progress() and one poll(0); far beyond any legitimate exchange).
constexpr long kMaxSpins = 2000000;

struct Delivered {
  uint8_t id;
  std::string data;
};

struct State {
  std::vector<Delivered> ams;
  int failed = 0;
};

// A stripe stream the transport opened to the harness (connecting side).
struct StripeConn {
  int fd = -1;
  uint8_t hello[sizeof(Hello)];
  size_t got = 0;
};

void onAm(void* arg, int src, transport::AmId id, const void* data, size_t len) {
  RRT_FUZZ_CHECK(src == 1);
  RRT_FUZZ_CHECK(len <= (64u << 10));
  auto* s = static_cast<State*>(arg);
  // Copying every byte lets ASan see a frame that runs past the receive buffer.
  s->ams.push_back({id, std::string(static_cast<const char*>(data), len)});
}

void onFailed(void* arg, int peer, Status) {
  RRT_FUZZ_CHECK(peer == 1);
  ++static_cast<State*>(arg)->failed;
}

Hello validHello(uint32_t verdict) {
  Hello h{};
  memcpy(h.magic, kHelloMagic, sizeof h.magic);
  memset(h.secret, kSecretByte, sizeof h.secret);
  h.rank = 1;
  h.peer = 0;
  h.size = 2;
  h.verdict = verdict;
  h.streams = 1;
  return h;
}

void append(std::string* s, const void* p, size_t n) {
  s->append(static_cast<const char*>(p), n);
}

void noDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Reads what the transport sent (its Hello, its AM) and tells whether it hung up.
bool drainSaysClosed(int fd) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n == 0) return true;
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }
}

// Takes the stripe streams the transport opens to the harness's listener and checks the Hello
// each brings: rank 0 to rank 1 of the job, a stripe stream. `reply` (or nullptr): the answer,
// its stream set to the one asked for unless `wrongStream`.
void serveStripes(int lfd, std::vector<StripeConn>* conns, const Hello* reply, bool wrongStream) {
  for (;;) {
    const int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    conns->emplace_back();
    conns->back().fd = fd;
  }
  for (StripeConn& c : *conns) {
    if (c.got == sizeof c.hello) continue;
    const ssize_t n = recv(c.fd, c.hello + c.got, sizeof c.hello - c.got, MSG_DONTWAIT);
    if (n <= 0) continue;  // nothing yet, or the transport gave the stream up
    c.got += static_cast<size_t>(n);
    if (c.got < sizeof c.hello) continue;
    Hello h;
    memcpy(&h, c.hello, sizeof h);
    const Hello mine = validHello(kVerdictNone);
    RRT_FUZZ_CHECK(memcmp(h.magic, mine.magic, sizeof h.magic) == 0 &&
                   memcmp(h.secret, mine.secret, sizeof h.secret) == 0);
    RRT_FUZZ_CHECK(h.rank == 0 && h.peer == 1 && h.size == 2 && h.verdict == kVerdictNone);
    RRT_FUZZ_CHECK(h.stream >= 1 && h.stream < kMaxStreams && h.streams == 2);
    if (!reply) continue;
    Hello r = *reply;
    r.stream = wrongStream ? 0 : h.stream;
    send(c.fd, &r, sizeof r, MSG_NOSIGNAL);  // a fresh socket takes 64 bytes whole
  }
}

// A blocking connect() that a signal interrupts: libFuzzer's timeout timer sends SIGALRM every
// 6 s (-timeout=10) without SA_RESTART, and a connect() sleeping for the loopback handshake then
// fails with EINTR while the handshake goes on. A clean-clone CI run failed on that (after
// 19532 inputs, 2 fuzzers on 2 cores); the input passed alone. Waits for the handshake instead.
bool connectLoopback(int fd, const sockaddr_in& sa) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return true;
  if (errno != EINTR) {
    fprintf(stderr, "fuzz_tcp_stream: connect: %s\n", strerror(errno));
    return false;
  }
  pollfd p{fd, POLLOUT, 0};
  int n;
  while ((n = poll(&p, 1, 10000)) < 0 && errno == EINTR) {
  }
  int err = n > 0 ? 0 : ETIMEDOUT;
  socklen_t len = sizeof err;
  if (n > 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) fprintf(stderr, "fuzz_tcp_stream: connect (after EINTR): %s\n", strerror(err));
  return err == 0;
}

void closeStripes(int* lfd, std::vector<StripeConn>* conns) {
  for (StripeConn& c : *conns) close(c.fd);
  conns->clear();
  if (*lfd >= 0) close(*lfd);
  *lfd = -1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool twoStreams = [] {
    setenv("RRT_TCP_STREAMS", "2", 1);
    config::reload();
    log::init();  // RRT_LOG=debug shows the handshakes
    return true;
  }();
  (void)twoStreams;
  if (!getenv("RRT_LOG")) log::gLevel = static_cast<log::Level>(-1);  // rejections are expected
  fuzz::Input in(data, size);
  const uint8_t side = in.u8();
  const bool connecting = side & 1;
  const bool answerStripes = connecting && (side & 2);
  const bool wrongStream = answerStripes && (side & 4);
  const bool putsOnStripe = answerStripes && !wrongStream && (side & 8);

  State state;
  transport::Context ctx;
  ctx.rank = 0;
  ctx.size = 2;
  ctx.nodeOf = {0, 0};  // one node: the transport listens on loopback
  ctx.jobId = "fuzz-tcp";
  ctx.secret = std::string(kSecretBytes, kSecretByte);
  ctx.amHandler = &onAm;
  ctx.peerFailed = &onFailed;
  ctx.handlerArg = &state;
  Status st;
  transport::TransportPtr tx = create(ctx, &st);
  RRT_FUZZ_CHECK(tx != nullptr);

  std::unique_ptr<uint8_t[]> region(new uint8_t[kRegion]());
  transport::MemHandle* mh = nullptr;
  RRT_FUZZ_CHECK(tx->memReg(region.get(), kRegion, memory::MemType::Host, &mh) == Status::Ok);
  uint64_t cookie = 0;
  RRT_FUZZ_CHECK(tx->rkeyPack(mh, &cookie) == sizeof cookie);
  const uint64_t base = reinterpret_cast<uint64_t>(region.get());

  // ---- the bytes "rank 1" sends ----
  std::string stream;
  const Hello want = validHello(connecting ? kVerdictAccept : kVerdictNone);
  Hello hello = want;
  const uint8_t hmode = in.u8();
  if (hmode & 0x80) {
    size_t got;
    const uint8_t* p = in.bytes(sizeof hello, &got);
    memset(&hello, 0, sizeof hello);
    memcpy(&hello, p, got);
  } else {
    auto* raw = reinterpret_cast<uint8_t*>(&hello);
    for (int e = 0; e < (hmode & 7); ++e) {
      const uint8_t off = in.u8() % sizeof hello;
      raw[off] = in.u8();
    }
  }
  append(&stream, &hello, sizeof hello);
  // The transport checks magic, secret and ranks (52 bytes), the stream (0: the pair's first
  // connection; a stripe stream is refused before the pair is established) and the streams
  // asked for (1..kMaxStreams); the connector also the verdict.
  const size_t checked = connecting ? 56 : 52;
  const bool helloOk = memcmp(&hello, &want, checked) == 0 && hello.stream == 0 &&
                       hello.streams >= 1 && hello.streams <= kMaxStreams;
  // Connecting side, a pair of two streams: the transport opens a stripe stream.
  const bool stripeAsked = connecting && helloOk && hello.streams > 1;
  std::string stripeStream;  // PUT frames for the stripe stream (putsOnStripe)

  std::vector<Delivered> expect;  // AMs of the well-formed frames before the first bad one
  bool wellFormed = true;
  while (!in.empty() && stream.size() + stripeStream.size() < kMaxStream) {
    switch (in.u8() % 4) {
      case 0: {
        const uint8_t id = in.u8();
        const uint16_t len = in.u16();
        FrameHeader f{len, kAm, id, 0};
        append(&stream, &f, sizeof f);
        size_t got;
        const uint8_t* p = in.bytes(len, &got);
        std::string payload(reinterpret_cast<const char*>(p), got);
        payload.resize(len, '\0');
        stream += payload;
        if (wellFormed) expect.push_back({id, payload});
        break;
      }
      case 1: {
        const uint8_t flags = in.u8();
        PutHeader h{};
        h.cookie = cookie;
        if (flags & 1) {
          const uint64_t hi = in.u32();
          h.cookie = hi << 32 | in.u32();
        }
        const uint16_t off = in.u16();
        const uint16_t len = in.u16();
        h.f = FrameHeader{len, kPut, 0, 0};
        h.addr = base + off;
        const bool onStripe = putsOnStripe && stripeAsked;
        std::string& out = onStripe ? stripeStream : stream;
        append(&out, &h, sizeof h);
        size_t got;
        const uint8_t* p = in.bytes(len, &got);
        std::string payload(reinterpret_cast<const char*>(p), got);
        payload.resize(len, '\0');
        out += payload;
        // A stripe stream refuses an empty put (a striped put never sends an empty part).
        if (h.cookie != cookie || size_t{off} + len > kRegion || (onStripe && len == 0))
          wellFormed = false;
        break;
      }
      case 2: {
        size_t got;
        const uint8_t* p = in.bytes(in.u8(), &got);
        append(&stream, p, got);
        wellFormed = false;
        break;
      }
      default: {
        FrameHeader f{in.u32(), in.u8(), in.u8(), 0};
        append(&stream, &f, sizeof f);
        wellFormed = false;
        break;
      }
    }
  }

  // ---- the connection ----
  int fd = -1;
  int lfd = -1;                    // connecting side: the harness's listener
  std::vector<StripeConn> stripes;
  if (!connecting) {
    std::vector<uint8_t> blob;
    RRT_FUZZ_CHECK(tx->address(&blob) == Status::Ok);
    uint16_t port = 0;
    std::vector<Endpoint> eps;
    RRT_FUZZ_CHECK(parseAddress(blob.data(), blob.size(), 0, &port, &eps) == Status::Ok);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    RRT_FUZZ_CHECK(fd >= 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    RRT_FUZZ_CHECK(eps[0].family == 4);  // a one-node job listens on IPv4 loopback
    memcpy(&sa.sin_addr.s_addr, eps[0].addr, 4);
    sa.sin_port = port;
    RRT_FUZZ_CHECK(connectLoopback(fd, sa));
  } else {
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    RRT_FUZZ_CHECK(lfd >= 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t slen = sizeof sa;
    RRT_FUZZ_CHECK(bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    RRT_FUZZ_CHECK(listen(lfd, 4) == 0);
    RRT_FUZZ_CHECK(getsockname(lfd, reinterpret_cast<sockaddr*>(&sa), &slen) == 0);
    std::vector<uint8_t> blob;
    packAddress(1, sa.sin_port, {Endpoint::v4(htonl(INADDR_LOOPBACK), 8)}, &blob);
    RRT_FUZZ_CHECK(tx->connect(1, blob.data(), blob.size()) == Status::Ok);
    RRT_FUZZ_CHECK(tx->amSend(1, 9, "hi", 2, nullptr, 0) == Status::Ok);  // opens the connection
    for (long spin = 0; fd < 0; ++spin) {
      RRT_FUZZ_CHECK(spin < kMaxSpins);
      tx->progress();
      fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      RRT_FUZZ_CHECK(fd >= 0 || errno == EAGAIN || errno == EWOULDBLOCK);
    }
    // lfd stays open: the transport's stripe streams connect to it.
  }
  noDelay(fd);
  const Hello* stripeReply = answerStripes ? &hello : nullptr;

  // Write everything (as far as the transport reads), then hang up the write side. Connecting
  // side, a pair of two streams: the transport opens the stripe stream once it read the Hello;
  // the frames follow once that stream's Hello came (answered: once the transport took the
  // answer, route() saying "+1", or failed the peer), so that they travel with the stripe
  // stream set up, as they would; PUT frames for the stripe stream go at the same time.
  size_t sent = 0, stripeSent = 0;
  bool closed = false;
  long spin = 0;
  auto pump = [&](size_t upTo, bool toStripe) {
    while ((sent < upTo || (toStripe && stripeSent < stripeStream.size())) && !closed) {
      RRT_FUZZ_CHECK(++spin < kMaxSpins);
      bool blocked = false;  // stream 0 takes nothing now
      if (sent < upTo) {
        const ssize_t n = send(fd, stream.data() + sent, upTo - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<size_t>(n);
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closed = true;
        else blocked = true;
      }
      if (toStripe && stripeSent < stripeStream.size()) {
        const ssize_t n = stripes.empty() ? 0 : send(stripes[0].fd, stripeStream.data() + stripeSent,
                                                     stripeStream.size() - stripeSent,
                                                     MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) stripeSent += static_cast<size_t>(n);
        else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
          stripeSent = stripeStream.size();  // the stripe stream is gone: nothing more goes
      }
      // After a malformed frame a stripe mark may hold stream 0 (which then takes nothing) until
      // the stripe stream brings its bytes or hangs up: it hangs up once they are out and
      // stream 0 is blocked (else with the hang-up of stream 0).
      if (toStripe && blocked && !wellFormed && stripeSent == stripeStream.size())
        closeStripes(&lfd, &stripes);
      tx->progress();
      if (lfd >= 0) serveStripes(lfd, &stripes, stripeReply, wrongStream);
      if (drainSaysClosed(fd)) closed = true;
    }
  };
  pump(stripeAsked ? sizeof hello : stream.size(), false);
  if (stripeAsked) {
    auto stripeUp = [&] {
      const std::string r = tx->route(1);
      return r.size() > 2 && r.compare(r.size() - 2, 2, "+1") == 0;
    };
    while (!closed && (stripes.empty() || stripes[0].got < sizeof(Hello) ||
                       (answerStripes && !stripeUp()))) {
      RRT_FUZZ_CHECK(++spin < kMaxSpins);
      tx->progress();
      serveStripes(lfd, &stripes, stripeReply, wrongStream);
      if (drainSaysClosed(fd)) closed = true;
    }
    pump(stream.size(), true);
  }
  shutdown(fd, SHUT_WR);
  // After a malformed frame a stripe mark may hold stream 0 until the stripe streams bring
  // what it announced: they hang up too, now. Else they stay until the transport closed stream
  // 0, so that it reads every frame before any stripe stream fails the peer.
  if (!wellFormed) closeStripes(&lfd, &stripes);
  while (!closed) {
    // A transport that keeps a connection whose peer hung up is a finding (a hang).
    RRT_FUZZ_CHECK(++spin < kMaxSpins);
    tx->progress();
    if (lfd >= 0) serveStripes(lfd, &stripes, stripeReply, wrongStream);
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0 && drainSaysClosed(fd)) closed = true;
  }
  close(fd);
  closeStripes(&lfd, &stripes);
  for (int i = 0; i < 4; ++i) tx->progress();  // reports the failure

  if (helloOk) {
    // A stripe stream that fails (refused: a wrong stream; closed with the hang-up) fails the
    // peer at a moment that races with stream 0's frames: the AMs that arrived are then
    // checked as far as they go.
    const bool stripeFails = connecting && hello.streams > 1 && (wrongStream || !wellFormed);
    if (!stripeFails) RRT_FUZZ_CHECK(state.ams.size() >= expect.size());
    for (size_t i = 0; i < expect.size() && i < state.ams.size(); ++i)
      RRT_FUZZ_CHECK(state.ams[i].id == expect[i].id && state.ams[i].data == expect[i].data);
    RRT_FUZZ_CHECK(state.failed == 1);  // the hang-up or a bad frame failed rank 1, once
  } else {
    RRT_FUZZ_CHECK(state.ams.empty());  // nothing of an unauthenticated connection is parsed
  }
  tx->memDereg(mh);
  return 0;
}

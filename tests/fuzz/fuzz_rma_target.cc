// Fuzz target: the target side of one-sided communication (runtime/rma/target.cc) fed with the
// requests a hostile or broken peer can send: any RmaHeader (operation, lock type, inline flag,
// datatype, reduction op, id, length, displacement) with any inline payload and any message
// length, separate data messages for any operation id, in any order. Every malformed request
// must be refused (an error answer or a dropped message, with a log line) and nothing may be
// read or written outside window memory.
//
// rrt runs as a singleton (a world of one, no rrun): the "peer" is this rank itself, and its
// requests are ordinary messages on the window's context, so they travel the real path (self
// transport, eager / rendezvous, the posted header receives, the rma poller). Each input gets
// three fresh windows: created over a buffer with guard zones (disp_unit 1), allocated by rrt
// (disp_unit 8), and dynamic with two attached regions inside guard zones. At the end every
// answer is received, the windows are freed (which must also drop operations still waiting for
// data that will never come), and the guard zones must be unchanged.
//
// Input: a sequence of operations, one byte of opcode each, then its operands:
//   0 request   window selector, shape flags, 16-bit length, that many bytes (header + payload;
//               flags bit 0 moves disp into or near the window, bit 1 makes bytes small)
//   1 data      window selector, 32-bit id, 16-bit length (a data message of tag rmaDataTag(id))
//   2 progress  a few rounds of core::progress()
#include <cstring>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/core/progress.h"
#include "runtime/core/request.h"
#include "runtime/proto/p2p.h"
#include "runtime/proto/wire.h"
#include "runtime/rma/window.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;
using proto::wire::RmaHeader;

namespace {

constexpr size_t kGuard = 64;
constexpr size_t kWinBytes = 256;
constexpr uint8_t kGuardByte = 0xa5;
constexpr size_t kMaxMessage = sizeof(RmaHeader) + proto::wire::kRmaInlineMax + 32;
constexpr size_t kMaxData = 1 << 16;

// Memory with guard zones on both sides: [guard | n bytes | guard].
struct Guarded {
  explicit Guarded(size_t n) : bytes(n), mem(new uint8_t[n + 2 * kGuard]) {
    memset(mem, kGuardByte, kGuard);
    memset(mem + kGuard, 0, n);
    memset(mem + kGuard + n, kGuardByte, kGuard);
  }
  ~Guarded() { delete[] mem; }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  uint8_t* user() { return mem + kGuard; }
  bool intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (mem[i] != kGuardByte || mem[kGuard + bytes + i] != kGuardByte) return false;
    return true;
  }
  size_t bytes;
  uint8_t* mem;
};

bool gInit = false;

void progressSome() {
  for (int i = 0; i < 4; ++i) core::progress();
}

// Receives every message left on the window's context (answers, stray data), so that no send
// to ourselves stays in flight and free() can finish.
void drain(rma::Window& w) {
  proto::Comm& c = *w.comm;
  for (int rounds = 0; rounds < 1000; ++rounds) {
    progressSome();
    bool found = false;
    rrt_status_t st;
    RRT_FUZZ_CHECK(proto::iprobe(c, c.ctx, RRT_ANY_SOURCE, RRT_ANY_TAG, &found, &st) == Status::Ok);
    if (!found) {
      if (w.quiet()) return;  // ops may still wait for data that never comes: free() ends them
      continue;
    }
    std::vector<uint8_t> buf(st.bytes ? st.bytes : 1);
    core::Request* r = nullptr;
    RRT_FUZZ_CHECK(proto::irecv(c, c.ctx, buf.data(), st.bytes, st.source, st.tag, &r) ==
                   Status::Ok);
    RRT_FUZZ_CHECK(core::waitFor([r] { return r->complete; }) == Status::Ok);
    core::requestRelease(r);
  }
  RRT_FUZZ_CHECK(!"the window's traffic does not drain");
}

// Sends len bytes to ourselves on the window's context and lets it go out.
void sendSelf(rma::Window& w, int tag, const void* buf, size_t len) {
  proto::Comm& c = *w.comm;
  core::Request* r = nullptr;
  RRT_FUZZ_CHECK(proto::isend(c, c.ctx, buf, len, 0, tag, 0, &r) == Status::Ok);
  // Eager sends complete at once; a rendezvous one completes when the window (or drain)
  // receives it. Either way it must not be left behind: wait with progress, bounded.
  for (int i = 0; i < 100 && !r->complete; ++i) progressSome();
  // Nobody took it (no operation waits for this id): receive it ourselves. Eager data that no
  // operation waited for stays unexpected, and an older such message of the same tag matches
  // first (a receive of just one would then wait for this send for good): receive every
  // message of the tag, oldest first, until this one went.
  while (!r->complete) {
    bool found = false;
    rrt_status_t st;
    RRT_FUZZ_CHECK(proto::iprobe(c, c.ctx, 0, tag, &found, &st) == Status::Ok);
    if (found) {
      std::vector<uint8_t> sink(st.bytes ? st.bytes : 1);
      core::Request* rr = nullptr;
      RRT_FUZZ_CHECK(proto::irecv(c, c.ctx, sink.data(), st.bytes, 0, tag, &rr) == Status::Ok);
      RRT_FUZZ_CHECK(core::waitFor([rr] { return rr->complete; }) == Status::Ok);
      core::requestRelease(rr);
    }
    progressSome();
  }
  core::requestRelease(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 14) return 0;
  if (!gInit) {
    RRT_FUZZ_CHECK(rrt_init(nullptr, nullptr) == RRT_SUCCESS);
    gInit = true;
    // Ends the singleton before LeakSanitizer's check at exit (it registered earlier, so runs
    // later).
    atexit([] { (void)rrt_finalize(); });
  }
  Guarded created(kWinBytes), region1(96), region2(64);
  rrt_win_t handles[3];
  void* allocBase = nullptr;
  RRT_FUZZ_CHECK(rrt_win_create(created.user(), kWinBytes, 1, RRT_COMM_WORLD, &handles[0]) ==
                 RRT_SUCCESS);
  RRT_FUZZ_CHECK(rrt_win_allocate(kWinBytes, 8, RRT_COMM_WORLD, &allocBase, &handles[1]) ==
                 RRT_SUCCESS);
  RRT_FUZZ_CHECK(rrt_win_create_dynamic(RRT_COMM_WORLD, &handles[2]) == RRT_SUCCESS);
  RRT_FUZZ_CHECK(rrt_win_attach(handles[2], region1.user(), region1.bytes) == RRT_SUCCESS);
  RRT_FUZZ_CHECK(rrt_win_attach(handles[2], region2.user(), region2.bytes) == RRT_SUCCESS);
  rma::Window* wins[3];
  for (int i = 0; i < 3; ++i) RRT_FUZZ_CHECK((wins[i] = rma::lookup(handles[i])) != nullptr);

  std::vector<uint8_t> payload;
  rrt::fuzz::Input in(data, size);
  while (!in.empty()) {
    switch (in.u8() % 3) {
      case 0: {
        const int wi = in.u8() % 3;
        const uint8_t flags = in.u8();
        size_t len = 0;
        const uint8_t* bytes = in.bytes(in.u16() % (kMaxMessage + 1), &len);
        payload.assign(bytes, bytes + len);
        if (len >= sizeof(RmaHeader)) {
          RmaHeader h;
          memcpy(&h, payload.data(), sizeof h);
          if (flags & 1) {  // into or just around the window
            if (wi == 2) {
              const Guarded& r = (h.disp & 0x100) ? region2 : region1;
              h.disp = reinterpret_cast<uintptr_t>(r.mem) + h.disp % (r.bytes + 2 * kGuard);
            } else {
              h.disp %= (wi == 1 ? kWinBytes / 8 : kWinBytes) + 8;
            }
          }
          if (flags & 2) h.bytes %= 300;
          memcpy(payload.data(), &h, sizeof h);
        }
        sendSelf(*wins[wi], proto::wire::kRmaHeaderTag, payload.data(), len);
        break;
      }
      case 1: {
        const int wi = in.u8() % 3;
        const uint32_t id = in.u32();
        const size_t len = in.u16() % (kMaxData + 1);
        payload.assign(len, static_cast<uint8_t>(id));
        sendSelf(*wins[wi], proto::wire::rmaDataTag(id), payload.data(), len);
        break;
      }
      default:
        progressSome();
        break;
    }
  }
  for (rma::Window* w : wins) drain(*w);
  for (rrt_win_t& h : handles) {
    // A window that saw refused requests may report them; it must still be freed.
    (void)rrt_win_free(&h);
    RRT_FUZZ_CHECK(h == RRT_WIN_NULL);
  }
  RRT_FUZZ_CHECK(created.intact() && region1.intact() && region2.intact());
  return 0;
}

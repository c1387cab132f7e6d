// Fuzz target: the tcp transport's connect(blob) with the address blob a peer published through
// PMIx (runtime/transport/tcp/address.h: header, then IPv4 and IPv6 address/prefix entries). One
// transport, rank 0 of a job of two, is made once; every input is offered to connect(1, ...),
// which must accept only a blob of exactly the size its count says, naming rank 1, with a port
// and well-formed entries (IPv4: prefix up to 32, the 12 bytes after the address zero; IPv6:
// prefix up to 128), and must refuse any other rank whatever the blob. connect() only records
// the addresses (the socket opens on first use), so nothing is dialled.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/log.h"
#include "runtime/transport/tcp/address.h"
#include "runtime/transport/tcp/frame.h"
#include "runtime/transport/tcp/tcp_transport.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;
using namespace rrt::transport::tcp;

namespace {

void ignoreAm(void*, int, transport::AmId, const void*, size_t) {}

transport::Transport* tcpTransport() {
  static transport::TransportPtr tx = [] {
    transport::Context ctx;
    ctx.rank = 0;
    ctx.size = 2;
    ctx.nodeOf = {0, 0};
    ctx.jobId = "fuzz-tcp-address";
    ctx.secret = std::string(kSecretBytes, 'k');
    ctx.amHandler = &ignoreAm;
    Status st;
    transport::TransportPtr t = create(ctx, &st);
    RRT_FUZZ_CHECK(t != nullptr);
    return t;
  }();
  return tx.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!getenv("RRT_LOG")) log::gLevel = static_cast<log::Level>(-1);  // rejections are expected
  else log::init();
  transport::Transport* tx = tcpTransport();
  std::unique_ptr<uint8_t[]> blob(new uint8_t[size ? size : 1]);  // exact size for ASan
  if (size) memcpy(blob.get(), data, size);
  const Status st = tx->connect(1, size ? blob.get() : nullptr, size);
  if (st == Status::Ok) {
    AddressHeader h;
    RRT_FUZZ_CHECK(size >= sizeof h);
    memcpy(&h, data, sizeof h);
    RRT_FUZZ_CHECK(h.magic == kAddressMagic && h.version == kAddressVersion && h.rank == 1 &&
                   h.port != 0 && h.count >= 1 && h.count <= kMaxAddresses &&
                   size == sizeof h + h.count * sizeof(AddressEntry));
    for (uint16_t i = 0; i < h.count; ++i) {
      AddressEntry e;
      memcpy(&e, data + sizeof h + i * sizeof e, sizeof e);
      static const uint8_t zero[12] = {};
      RRT_FUZZ_CHECK((e.family == 4 && e.prefix <= 32 && memcmp(e.addr + 4, zero, 12) == 0) ||
                     (e.family == 6 && e.prefix <= 128));
    }
  } else {
    RRT_FUZZ_CHECK(st == Status::ErrArg);
  }
  // Itself and ranks outside the job are refused whatever the blob.
  RRT_FUZZ_CHECK(tx->connect(0, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->connect(2, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->connect(-1, blob.get(), size) != Status::Ok);
  return 0;
}

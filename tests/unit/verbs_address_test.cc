// The verbs transport's wire formats, parsed without a device: the address blob (version 3:
// eager classes, then PMIx-exchanged QP slots per rank and class or an rdma_cm endpoint), the rdma_cm handshake's private data, the
// endpoint a RoCE GID gives and the job hash. Malformed input of every kind must be refused with
// a Status (never read out of bounds: the ASan build runs this too).
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/transport/verbs/address.h"

namespace rrt::transport::verbs {
namespace {

AddressHeader header() {
  AddressHeader h{};
  h.lid = 0x1234;
  for (int i = 0; i < 16; ++i) h.gid[i] = static_cast<uint8_t>(i + 1);
  h.hasGid = 1;
  h.mtu = 3;  // IBV_MTU_1024
  h.linkLayer = 2;
  return h;
}

EagerClasses twoClasses() {
  EagerClasses c;
  c.n = 2;
  c.bufBytes[0] = 1024;
  c.bufBytes[1] = 8256;
  c.credits[0] = 64;
  c.credits[1] = 16;
  return c;
}

EagerClasses oneClass() {
  EagerClasses c;
  c.n = 1;
  c.bufBytes[0] = 8256;
  c.credits[0] = 32;
  return c;
}

// Rank w's QP of class c: QPN 0x100 + 16 w + c, PSN 0xabc000 + 16 w + c.
std::vector<uint8_t> pmixBlob(int world) {
  std::vector<QpSlot> slots;
  for (int w = 0; w < world; ++w)
    for (int c = 0; c < 2; ++c)
      slots.push_back(QpSlot{static_cast<uint32_t>(0x100 + 16 * w + c),
                             static_cast<uint32_t>(0xabc000 + 16 * w + c)});
  std::vector<uint8_t> b;
  packAddress(header(), twoClasses(), slots, nullptr, &b);
  return b;
}

CmEndpoint v4(const char* ip, uint16_t port) {
  CmEndpoint ep{};
  ep.family = 4;
  ep.port = htons(port);
  inet_pton(AF_INET, ip, ep.addr);
  return ep;
}

std::vector<uint8_t> cmBlob(const CmEndpoint& ep) {
  std::vector<uint8_t> b;
  packAddress(header(), oneClass(), {}, &ep, &b);
  return b;
}

TEST(VerbsAddress, PmixBlobRoundTrip) {
  const std::vector<uint8_t> b = pmixBlob(4);
  ASSERT_EQ(b.size(), sizeof(AddressHeader) + sizeof(ClassTable) + 8 * sizeof(QpSlot));
  PeerAddress a;
  ASSERT_EQ(parseAddress(b.data(), b.size(), 4, 2, &a), Status::Ok);
  EXPECT_EQ(a.cm, CmKind::Pmix);
  EXPECT_EQ(a.qp.qpn, 0x120u);
  EXPECT_EQ(a.qp.psn, 0xabc020u);
  EXPECT_EQ(a.qpn[0], 0x120u);
  EXPECT_EQ(a.qpn[1], 0x121u);
  EXPECT_EQ(a.psn[1], 0xabc021u);
  ASSERT_EQ(a.classes.n, 2);
  EXPECT_EQ(a.classes.bufBytes[0], 1024u);
  EXPECT_EQ(a.classes.bufBytes[1], 8256u);
  EXPECT_EQ(a.classes.credits[0], 64u);
  EXPECT_EQ(a.classes.credits[1], 16u);
  EXPECT_EQ(a.qp.lid, 0x1234);
  EXPECT_TRUE(a.qp.hasGid);
  EXPECT_EQ(a.qp.gid[15], 16);
  EXPECT_EQ(a.qp.mtu, 3);
  EXPECT_EQ(a.linkLayer, 2);
}

TEST(VerbsAddress, RdmacmBlobRoundTrip) {
  const std::vector<uint8_t> b = cmBlob(v4("10.11.12.1", 40001));
  ASSERT_EQ(b.size(), sizeof(AddressHeader) + sizeof(ClassTable) + sizeof(CmEndpoint));
  PeerAddress a;
  ASSERT_EQ(parseAddress(b.data(), b.size(), 8, 5, &a), Status::Ok);
  EXPECT_EQ(a.cm, CmKind::Rdmacm);
  ASSERT_EQ(a.classes.n, 1);
  EXPECT_EQ(a.classes.bufBytes[0], 8256u);
  EXPECT_EQ(endpointString(a.ep), "10.11.12.1:40001");

  CmEndpoint six{};
  six.family = 6;
  six.port = htons(7);
  inet_pton(AF_INET6, "fd00::5", six.addr);
  const std::vector<uint8_t> b6 = cmBlob(six);
  ASSERT_EQ(parseAddress(b6.data(), b6.size(), 2, 0, &a), Status::Ok);
  EXPECT_EQ(endpointString(a.ep), "[fd00::5]:7");
}

// Every way a blob can be wrong, and every truncation, is ErrWireup.
TEST(VerbsAddress, MalformedBlobsAreRefused) {
  PeerAddress a;
  const std::vector<uint8_t> good = pmixBlob(3);
  const std::vector<uint8_t> goodCm = cmBlob(v4("192.168.1.7", 5000));
  for (const auto* g : {&good, &goodCm})
    for (size_t n = 0; n < g->size(); ++n)
      EXPECT_EQ(parseAddress(g->data(), n, 3, 1, &a), Status::ErrWireup) << "truncated to " << n;
  EXPECT_EQ(parseAddress(nullptr, 100, 3, 1, &a), Status::ErrWireup);

  auto mutated = [](std::vector<uint8_t> b, size_t off, const void* v, size_t n) {
    memcpy(b.data() + off, v, n);
    return b;
  };
  const uint32_t badMagic = 0x12345678, zero32 = 0, bigQpn = 0x1000000, five = 5, buf1000 = 1000,
                 buf32 = 32, buf512 = 512;
  const uint16_t v1 = 1, v2 = 2;
  const uint8_t n0 = 0, n2 = 2, n5 = 5;
  const size_t T = sizeof(AddressHeader), C0 = T + offsetof(ClassTable, cls),
               C1 = C0 + sizeof(ClassInfo);
  const uint8_t mtu0 = 0, mtu6 = 6, gid2 = 2, cm7 = 7, fam5 = 5, junk = 9;
  const uint16_t port0 = 0;
  const size_t H = sizeof(AddressHeader) + sizeof(ClassTable);
  struct Case {
    const char* what;
    std::vector<uint8_t> blob;
  } cases[] = {
      {"magic", mutated(good, offsetof(AddressHeader, magic), &badMagic, 4)},
      {"version 1", mutated(good, offsetof(AddressHeader, version), &v1, 2)},
      {"version 2", mutated(good, offsetof(AddressHeader, version), &v2, 2)},
      {"no classes", mutated(good, T, &n0, 1)},
      {"5 classes", mutated(good, T, &n5, 1)},
      {"class not a multiple of 64", mutated(good, C0, &buf1000, 4)},
      {"class below 64 bytes", mutated(good, C0, &buf32, 4)},
      {"classes not ascending", mutated(good, C1, &buf512, 4)},
      {"a class with 1 credit", mutated(good, C1 + offsetof(ClassInfo, credits), &v1, 2)},
      {"rdmacm with 2 classes", mutated(goodCm, T, &n2, 1)},
      {"no QP for this rank's class 1", mutated(good, H + sizeof(QpSlot) * 3, &zero32, 4)},
      {"mtu 0", mutated(good, offsetof(AddressHeader, mtu), &mtu0, 1)},
      {"mtu 6", mutated(good, offsetof(AddressHeader, mtu), &mtu6, 1)},
      {"hasGid 2", mutated(good, offsetof(AddressHeader, hasGid), &gid2, 1)},
      {"unknown cm", mutated(good, offsetof(AddressHeader, cm), &cm7, 1)},
      {"count not the world", mutated(good, offsetof(AddressHeader, count), &five, 4)},
      {"no QP for this rank", mutated(good, H + sizeof(QpSlot) * 2, &zero32, 4)},
      {"QPN beyond 24 bits", mutated(good, H + sizeof(QpSlot) * 2, &bigQpn, 4)},
      {"rdmacm with a count", mutated(goodCm, offsetof(AddressHeader, count), &five, 4)},
      {"rdmacm read as pmix", mutated(goodCm, offsetof(AddressHeader, cm), &mtu0, 1)},
      {"pmix read as rdmacm", mutated(good, offsetof(AddressHeader, cm), &v1, 1)},
      {"port 0", mutated(goodCm, H + offsetof(CmEndpoint, port), &port0, 2)},
      {"family 5", mutated(goodCm, H + offsetof(CmEndpoint, family), &fam5, 1)},
      {"pad set", mutated(goodCm, H + offsetof(CmEndpoint, pad), &junk, 1)},
      {"IPv4 with junk", mutated(goodCm, H + offsetof(CmEndpoint, addr) + 7, &junk, 1)},
      {"IPv4 0.0.0.0", mutated(goodCm, H + offsetof(CmEndpoint, addr), &zero32, 4)},
  };
  for (const Case& c : cases)
    EXPECT_EQ(parseAddress(c.blob.data(), c.blob.size(), 3, 1, &a), Status::ErrWireup) << c.what;
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(parseAddress(longer.data(), longer.size(), 3, 1, &a), Status::ErrWireup);
  std::vector<uint8_t> longerCm = goodCm;
  longerCm.push_back(0);
  EXPECT_EQ(parseAddress(longerCm.data(), longerCm.size(), 3, 1, &a), Status::ErrWireup);
  EXPECT_EQ(parseAddress(good.data(), good.size(), 3, 3, &a), Status::ErrWireup);   // rank >= world
  EXPECT_EQ(parseAddress(good.data(), good.size(), 3, -1, &a), Status::ErrWireup);
  EXPECT_EQ(parseAddress(good.data(), good.size(), 4, 1, &a), Status::ErrWireup);   // world differs
}

// Any byte changed: a Status, never a crash; random bytes are never taken for an address.
TEST(VerbsAddress, ArbitraryBytes) {
  PeerAddress a;
  for (const std::vector<uint8_t>& g : {pmixBlob(5), cmBlob(v4("10.0.0.1", 1))})
    for (size_t i = 0; i < g.size(); ++i)
      for (int v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
        std::vector<uint8_t> b = g;
        b[i] = static_cast<uint8_t>(v);
        Status st = parseAddress(b.data(), b.size(), 5, 4, &a);
        EXPECT_TRUE(st == Status::Ok || st == Status::ErrWireup);
      }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b(rng() % 96);
    for (uint8_t& c : b) c = static_cast<uint8_t>(rng());
    EXPECT_EQ(parseAddress(b.data(), b.size(), 4, 1, &a), Status::ErrWireup);
  }
}

TEST(VerbsAddress, EndpointFromGid) {
  uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 11, 12, 1};
  CmEndpoint ep;
  ASSERT_EQ(endpointFromGid(gid, &ep), Status::Ok);
  EXPECT_EQ(ep.family, 4);
  EXPECT_EQ(ep.port, 0);
  EXPECT_EQ(endpointString(ep), "10.11.12.1:0");

  uint8_t any[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0};
  EXPECT_EQ(endpointFromGid(any, &ep), Status::ErrUnsupported);
  uint8_t zero[16] = {};
  EXPECT_EQ(endpointFromGid(zero, &ep), Status::ErrUnsupported);
  uint8_t linkLocal[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0x5e, 0xff, 0xfe, 0, 0, 1};
  EXPECT_EQ(endpointFromGid(linkLocal, &ep), Status::ErrUnsupported);
  uint8_t mcast[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(endpointFromGid(mcast, &ep), Status::ErrUnsupported);
  uint8_t global[16];
  inet_pton(AF_INET6, "2001:db8::17", global);
  ASSERT_EQ(endpointFromGid(global, &ep), Status::Ok);
  EXPECT_EQ(ep.family, 6);
  EXPECT_EQ(endpointString(ep), "[2001:db8::17]:0");
}

TEST(VerbsAddress, JobHash) {
  EXPECT_EQ(jobHash("job.1", "s3cret"), jobHash("job.1", "s3cret"));
  EXPECT_NE(jobHash("job.1", "s3cret"), jobHash("job.2", "s3cret"));
  EXPECT_NE(jobHash("job.1", "s3cret"), jobHash("job.1", "s3creu"));
  EXPECT_NE(jobHash("ab", "c"), jobHash("a", "bc"));
  EXPECT_NE(jobHash("job.1", ""), jobHash("job.1", std::string(1, '\0')));
}

TEST(VerbsCmPrivate, AcceptsTheJobsOwnAndRejectsEveryStranger) {
  const uint64_t job = jobHash("nspace-7", "0123456789abcdef0123456789abcdef");
  int src = -1;
  CmReject reason = CmReject::None;
  const char* why = "";
  CmPrivate p = makeCmPrivate(CmMsg::Connect, 3, 1, job);
  ASSERT_EQ(checkCmPrivate(&p, sizeof p, CmMsg::Connect, job, 4, 1, &src, nullptr, &why), Status::Ok);
  EXPECT_EQ(src, 3);
  // rdma_cm delivers a REQ's private data padded to 56 bytes
  uint8_t padded[56] = {};
  memcpy(padded, &p, sizeof p);
  EXPECT_EQ(checkCmPrivate(padded, sizeof padded, CmMsg::Connect, job, 4, 1, &src, nullptr, &why),
            Status::Ok);

  struct Case {
    const char* what;
    CmPrivate p;
    size_t len;
    CmMsg want;
    const char* why;
  };
  CmPrivate magic = p, version = p, other = p, dst = p, srcBig = p, srcSelf = p, reason1 = p;
  magic.magic ^= 1;
  version.version = 2;
  other.job ^= 0x100;
  dst.dst = 2;
  srcBig.src = 4;
  srcSelf.src = 1;
  reason1.reason = 1;
  const Case cases[] = {
      {"short", p, sizeof p - 1, CmMsg::Connect, "no rrt private data"},
      {"magic", magic, sizeof p, CmMsg::Connect, "not an rrt connection"},
      {"version", version, sizeof p, CmMsg::Connect, "not an rrt connection"},
      {"another job", other, sizeof p, CmMsg::Connect, "wrong job"},
      {"another rank", dst, sizeof p, CmMsg::Connect, "meant for another rank"},
      {"source beyond the world", srcBig, sizeof p, CmMsg::Connect, "impossible source rank"},
      {"source is me", srcSelf, sizeof p, CmMsg::Connect, "impossible source rank"},
      {"reason outside a reject", reason1, sizeof p, CmMsg::Connect, "reason outside a reject"},
      {"a REQ where a REP is due", p, sizeof p, CmMsg::Accept, "unexpected handshake message"},
  };
  for (const Case& c : cases) {
    why = "";
    EXPECT_EQ(checkCmPrivate(&c.p, c.len, c.want, job, 4, 1, &src, nullptr, &why), Status::ErrWireup)
        << c.what;
    EXPECT_STREQ(why, c.why) << c.what;
  }
  EXPECT_EQ(checkCmPrivate(nullptr, 0, CmMsg::Connect, job, 4, 1, &src, nullptr, &why),
            Status::ErrWireup);

  CmPrivate rej = makeCmPrivate(CmMsg::Reject, 0, 1, job, CmReject::Crossing);
  ASSERT_EQ(checkCmPrivate(&rej, sizeof rej, CmMsg::Reject, job, 4, 1, &src, &reason, &why), Status::Ok);
  EXPECT_EQ(src, 0);
  EXPECT_EQ(reason, CmReject::Crossing);
  rej.reason = 9;
  EXPECT_EQ(checkCmPrivate(&rej, sizeof rej, CmMsg::Reject, job, 4, 1, &src, &reason, &why),
            Status::ErrWireup);
  EXPECT_STREQ(why, "unknown reject reason");
}

}  // namespace
}  // namespace rrt::transport::verbs

#include "runtime/transport/verbs/address.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <cstdio>
#include <cstring>

namespace rrt::transport::verbs {

void packAddress(AddressHeader h, const EagerClasses& classes, const std::vector<QpSlot>& slots,
                 const CmEndpoint* ep, std::vector<uint8_t>* out) {
  h.magic = kAddrMagic;
  h.version = kAddrVersion;
  h.cm = static_cast<uint8_t>(ep ? CmKind::Rdmacm : CmKind::Pmix);
  h.count = ep ? 0 : static_cast<uint32_t>(slots.size());
  ClassTable t{};
  t.n = static_cast<uint8_t>(classes.n);
  for (int c = 0; c < classes.n && c < kMaxEagerClasses; ++c)
    t.cls[c] = ClassInfo{classes.bufBytes[c], static_cast<uint16_t>(classes.credits[c]), 0};
  const size_t tail = ep ? sizeof *ep : sizeof(QpSlot) * slots.size();
  out->resize(sizeof h + sizeof t + tail);
  memcpy(out->data(), &h, sizeof h);
  memcpy(out->data() + sizeof h, &t, sizeof t);
  if (ep)
    memcpy(out->data() + sizeof h + sizeof t, ep, sizeof *ep);
  else if (!slots.empty())
    memcpy(out->data() + sizeof h + sizeof t, slots.data(), tail);
}

namespace {

bool validEndpoint(const CmEndpoint& ep) {
  if (ep.port == 0 || ep.pad != 0) return false;
  if (ep.family == 4) {
    for (int i = 4; i < 16; ++i)
      if (ep.addr[i] != 0) return false;
    uint32_t a;
    memcpy(&a, ep.addr, 4);
    return a != 0;
  }
  if (ep.family == 6) {
    static const uint8_t zero[16] = {};
    return memcmp(ep.addr, zero, 16) != 0;
  }
  return false;
}

}  // namespace

Status parseAddress(const void* blob, size_t len, int worldSize, int myRank, PeerAddress* out) {
  AddressHeader h;
  ClassTable t;
  if (!blob || len < sizeof h + sizeof t || worldSize < 1 || myRank < 0 || myRank >= worldSize)
    return Status::ErrWireup;
  memcpy(&h, blob, sizeof h);
  memcpy(&t, static_cast<const uint8_t*>(blob) + sizeof h, sizeof t);
  if (h.magic != kAddrMagic || h.version != kAddrVersion || h.mtu < IBV_MTU_256 ||
      h.mtu > IBV_MTU_4096 || h.hasGid > 1)
    return Status::ErrWireup;
  if (t.n < 1 || t.n > kMaxEagerClasses) return Status::ErrWireup;
  PeerAddress a;
  a.classes.n = t.n;
  for (int c = 0; c < t.n; ++c) {
    const ClassInfo& ci = t.cls[c];
    if (ci.bufBytes < kMinEagerBuf || ci.bufBytes % 64 != 0 || ci.credits < kMinCredits ||
        (c > 0 && ci.bufBytes <= t.cls[c - 1].bufBytes))
      return Status::ErrWireup;
    a.classes.bufBytes[c] = ci.bufBytes;
    a.classes.credits[c] = ci.credits;
  }
  const auto* tail = static_cast<const uint8_t*>(blob) + sizeof h + sizeof t;
  len -= sizeof t;
  a.linkLayer = h.linkLayer;
  a.qp.lid = h.lid;
  memcpy(a.qp.gid, h.gid, 16);
  a.qp.hasGid = h.hasGid != 0;
  a.qp.mtu = h.mtu;
  if (h.cm == static_cast<uint8_t>(CmKind::Pmix)) {
    if (h.count != static_cast<uint32_t>(worldSize) * t.n ||
        len != sizeof h + sizeof(QpSlot) * static_cast<size_t>(h.count))
      return Status::ErrWireup;
    for (int c = 0; c < t.n; ++c) {
      QpSlot s;
      memcpy(&s, tail + sizeof s * (static_cast<size_t>(myRank) * t.n + static_cast<size_t>(c)),
             sizeof s);
      if (s.qpn == 0 || s.qpn > 0xffffff) return Status::ErrWireup;  // no QP for us / not a QPN
      a.qpn[c] = s.qpn;
      a.psn[c] = s.psn & 0xffffff;
    }
    a.cm = CmKind::Pmix;
    a.qp.qpn = a.qpn[0];
    a.qp.psn = a.psn[0];
  } else if (h.cm == static_cast<uint8_t>(CmKind::Rdmacm)) {
    if (h.count != 0 || t.n != 1 || len != sizeof h + sizeof(CmEndpoint)) return Status::ErrWireup;
    memcpy(&a.ep, tail, sizeof a.ep);
    if (!validEndpoint(a.ep)) return Status::ErrWireup;
    a.cm = CmKind::Rdmacm;
  } else {
    return Status::ErrWireup;
  }
  *out = a;
  return Status::Ok;
}

Status endpointFromGid(const uint8_t gid[16], CmEndpoint* out) {
  static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  CmEndpoint ep{};
  if (memcmp(gid, v4mapped, 12) == 0) {
    ep.family = 4;
    memcpy(ep.addr, gid + 12, 4);
    uint32_t a;
    memcpy(&a, ep.addr, 4);
    if (a == 0) return Status::ErrUnsupported;
  } else {
    static const uint8_t zero[16] = {};
    if (memcmp(gid, zero, 16) == 0) return Status::ErrUnsupported;
    if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) return Status::ErrUnsupported;  // fe80::/10
    if (gid[0] == 0xff) return Status::ErrUnsupported;                            // multicast
    ep.family = 6;
    memcpy(ep.addr, gid, 16);
  }
  *out = ep;
  return Status::Ok;
}

std::string endpointString(const CmEndpoint& ep) {
  char ip[INET6_ADDRSTRLEN] = "?";
  char buf[INET6_ADDRSTRLEN + 16];
  if (ep.family == 4) {
    inet_ntop(AF_INET, ep.addr, ip, sizeof ip);
    snprintf(buf, sizeof buf, "%s:%u", ip, ntohs(ep.port));
  } else {
    inet_ntop(AF_INET6, ep.addr, ip, sizeof ip);
    snprintf(buf, sizeof buf, "[%s]:%u", ip, ntohs(ep.port));
  }
  return buf;
}

uint64_t jobHash(const std::string& jobId, const std::string& secret) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  mix(jobId);
  h ^= 0xff;  // a separator: ("ab", "c") and ("a", "bc") differ
  h *= 0x100000001b3ull;
  mix(secret);
  return h;
}

CmPrivate makeCmPrivate(CmMsg msg, int src, int dst, uint64_t job, CmReject reason) {
  CmPrivate p{};
  p.magic = kCmMagic;
  p.version = kCmVersion;
  p.msg = static_cast<uint8_t>(msg);
  p.reason = static_cast<uint8_t>(reason);
  p.src = static_cast<uint32_t>(src);
  p.dst = static_cast<uint32_t>(dst);
  p.job = job;
  return p;
}

Status checkCmPrivate(const void* data, size_t len, CmMsg want, uint64_t job, int worldSize,
                      int myRank, int* src, CmReject* reason, const char** why) {
  CmPrivate p;
  if (!data || len < sizeof p) {
    *why = "no rrt private data";
    return Status::ErrWireup;
  }
  memcpy(&p, data, sizeof p);
  if (p.magic != kCmMagic || p.version != kCmVersion) {
    *why = "not an rrt connection";
    return Status::ErrWireup;
  }
  if (p.msg != static_cast<uint8_t>(want)) {
    *why = "unexpected handshake message";
    return Status::ErrWireup;
  }
  if (p.job != job) {
    *why = "wrong job";
    return Status::ErrWireup;
  }
  if (p.dst != static_cast<uint32_t>(myRank)) {
    *why = "meant for another rank";
    return Status::ErrWireup;
  }
  if (p.src >= static_cast<uint32_t>(worldSize) || p.src == static_cast<uint32_t>(myRank)) {
    *why = "impossible source rank";
    return Status::ErrWireup;
  }
  if (want == CmMsg::Reject) {
    if (p.reason != static_cast<uint8_t>(CmReject::Crossing) &&
        p.reason != static_cast<uint8_t>(CmReject::Duplicate)) {
      *why = "unknown reject reason";
      return Status::ErrWireup;
    }
  } else if (p.reason != 0) {
    *why = "reason outside a reject";
    return Status::ErrWireup;
  }
  *src = static_cast<int>(p.src);
  if (reason) *reason = static_cast<CmReject>(p.reason);
  return Status::Ok;
}

}  // namespace rrt::transport::verbs

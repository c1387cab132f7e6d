#include "runtime/transport/tcp/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "runtime/core/log.h"

namespace rrt::transport::tcp {
namespace {

// Whether the first prefix bits of a and b agree.
bool prefixEqual(const uint8_t* a, const uint8_t* b, unsigned prefix) {
  const unsigned whole = prefix / 8, rest = prefix % 8;
  if (memcmp(a, b, whole) != 0) return false;
  if (rest == 0) return true;
  const uint8_t m = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[whole] & m) == (b[whole] & m);
}

uint8_t prefixOfMask(const uint8_t* mask, size_t bytes) {
  unsigned n = 0;
  for (size_t i = 0; i < bytes; ++i) n += static_cast<unsigned>(__builtin_popcount(mask[i]));
  return static_cast<uint8_t>(n);
}

struct Item {
  bool exclude = false;
  bool subnet = false;
  std::string name;
  Endpoint net;
};

bool parseItem(std::string s, Item* it) {
  if (!s.empty() && s[0] == '^') {
    it->exclude = true;
    s.erase(0, 1);
  }
  if (s.empty()) return false;
  const size_t slash = s.find('/');
  if (slash == std::string::npos) {
    it->name = s;
    return true;
  }
  const std::string ip = s.substr(0, slash), bits = s.substr(slash + 1);
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int prefix = atoi(bits.c_str());
  in_addr a4;
  in6_addr a6;
  if (inet_pton(AF_INET, ip.c_str(), &a4) == 1) {
    if (prefix > 32) return false;
    it->net = Endpoint::v4(a4.s_addr, static_cast<uint8_t>(prefix));
  } else if (inet_pton(AF_INET6, ip.c_str(), &a6) == 1) {
    if (prefix > 128) return false;
    it->net = Endpoint::v6(a6, static_cast<uint8_t>(prefix));
  } else {
    return false;
  }
  it->subnet = true;
  return true;
}

bool matches(const Item& it, const Interface& i) {
  if (!it.subnet) return it.name == i.name;
  return i.ep.family == it.net.family && prefixEqual(i.ep.addr, it.net.addr, it.net.prefix);
}

}  // namespace

std::vector<Interface> listInterfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    Interface i;
    if (a->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      uint8_t prefix = 32;
      if (a->ifa_netmask)
        prefix = prefixOfMask(reinterpret_cast<const uint8_t*>(
                                  &reinterpret_cast<const sockaddr_in*>(a->ifa_netmask)->sin_addr), 4);
      i.ep = Endpoint::v4(in->sin_addr.s_addr, prefix);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      // Link-local addresses need a scope (interface) id that another host cannot publish
      // for us; IPv4-mapped ones are IPv4 already listed.
      if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) || IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) continue;
      uint8_t prefix = 128;
      if (a->ifa_netmask)
        prefix = prefixOfMask(reinterpret_cast<const uint8_t*>(
                                  &reinterpret_cast<const sockaddr_in6*>(a->ifa_netmask)->sin6_addr), 16);
      i.ep = Endpoint::v6(in6->sin6_addr, prefix);
    } else {
      continue;
    }
    i.name = a->ifa_name;
    i.up = (a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_RUNNING);
    i.loopback = a->ifa_flags & IFF_LOOPBACK;
    out.push_back(i);
  }
  // IPv4 first: connect() tries a peer's addresses in the order published.
  std::stable_partition(out.begin(), out.end(), [](const Interface& i) { return i.ep.family == 4; });
  freeifaddrs(list);
  return out;
}

Status selectEndpoints(const std::string& spec, bool jobOnOneNode,
                       const std::vector<Interface>& ifs, std::vector<Endpoint>* out) {
  out->clear();
  std::vector<Item> items;
  bool anyInclude = false;
  if (spec != "auto" && !spec.empty()) {
    std::stringstream ss(spec);
    std::string s;
    while (std::getline(ss, s, ',')) {
      Item it;
      if (!parseItem(s, &it)) return Status::ErrArg;
      anyInclude |= !it.exclude;
      items.push_back(it);
    }
  }
  for (const Interface& i : ifs) {
    if (!i.up) continue;
    bool take;
    if (anyInclude) {
      take = std::any_of(items.begin(), items.end(),
                         [&](const Item& it) { return !it.exclude && matches(it, i); });
    } else {
      // One node: one loopback address (IPv4 first), so the socket binds to it alone.
      take = jobOnOneNode ? i.loopback && out->empty() : !i.loopback;
    }
    if (std::any_of(items.begin(), items.end(),
                    [&](const Item& it) { return it.exclude && matches(it, i); }))
      take = false;
    if (take && out->size() < kMaxAddresses) out->push_back(i.ep);
  }
  if (out->empty() && !anyInclude) {
    // auto found no other interface: loopback still serves ranks of this host.
    for (const Interface& i : ifs)
      if (i.up && i.loopback) {
        RRT_WARN("tcp: no usable non-loopback interface; listening on loopback only");
        out->push_back(i.ep);
        break;
      }
  }
  return out->empty() ? Status::ErrUnsupported : Status::Ok;
}

bool sameSubnet(const Endpoint& a, const Endpoint& b) {
  return a.family == b.family && prefixEqual(a.addr, b.addr, std::min(a.prefix, b.prefix));
}

}  // namespace rrt::transport::tcp

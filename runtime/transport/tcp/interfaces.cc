#include "runtime/transport/tcp/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "runtime/core/log.h"

namespace rrt::transport::tcp {
namespace {

uint32_t maskOf(uint8_t prefix) {
  return prefix == 0 ? 0u : htonl(~uint32_t{0} << (32 - prefix));
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
  in_addr a;
  const std::string ip = s.substr(0, slash), bits = s.substr(slash + 1);
  if (inet_pton(AF_INET, ip.c_str(), &a) != 1 || bits.empty() || bits.size() > 2 ||
      bits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int prefix = atoi(bits.c_str());
  if (prefix > 32) return false;
  it->subnet = true;
  it->net.ipv4 = a.s_addr;
  it->net.prefix = static_cast<uint8_t>(prefix);
  return true;
}

bool matches(const Item& it, const Interface& i) {
  if (!it.subnet) return it.name == i.name;
  const uint32_t m = maskOf(it.net.prefix);
  return (i.ep.ipv4 & m) == (it.net.ipv4 & m);
}

}  // namespace

std::vector<Interface> listInterfaces() {
  std::vector<Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    Interface i;
    i.name = a->ifa_name;
    i.ep.ipv4 = reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr;
    uint8_t prefix = 32;
    if (a->ifa_netmask)
      prefix = static_cast<uint8_t>(__builtin_popcount(
          reinterpret_cast<const sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr));
    i.ep.prefix = prefix;
    i.up = (a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_RUNNING);
    i.loopback = a->ifa_flags & IFF_LOOPBACK;
    out.push_back(i);
  }
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
      take = jobOnOneNode ? i.loopback : !i.loopback;
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
  const uint32_t m = maskOf(std::min(a.prefix, b.prefix));
  return (a.ipv4 & m) == (b.ipv4 & m);
}

}  // namespace rrt::transport::tcp

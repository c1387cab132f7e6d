// Which local addresses (IPv4, and IPv6 other than link-local) the TCP transport listens on and
// publishes (RRT_TCP_IF).
//
// spec: "auto", or a comma list of items, each an interface name (eth0) or a subnet
// (10.0.0.0/8, fd00::/8); an item starting with '^' excludes. With include items, only matching addresses
// are taken; exclude items then remove addresses. auto: every up non-loopback interface; when
// the whole job is on this node, loopback only (always there, and the fastest path); when no
// non-loopback interface is up, loopback with a warning.
// Pure function of its inputs (unit-tested with made-up interface lists).
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/transport/tcp/address.h"

namespace rrt::transport::tcp {

struct Interface {
  std::string name;
  Endpoint ep;
  bool up = false;
  bool loopback = false;
};

// The machine's interface addresses (getifaddrs), IPv4 ones first.
std::vector<Interface> listInterfaces();

// Applies spec to ifs; ErrArg for a malformed spec, ErrUnsupported when nothing is left.
Status selectEndpoints(const std::string& spec, bool jobOnOneNode, const std::vector<Interface>& ifs,
                       std::vector<Endpoint>* out);

// Whether a and b share a subnet (the shorter of the two prefixes).
bool sameSubnet(const Endpoint& a, const Endpoint& b);

}  // namespace rrt::transport::tcp

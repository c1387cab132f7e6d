#include "tests/softrdma/cma.h"

#include <cerrno>
#include <vector>

namespace rrt::tests::softrdma {
namespace {

// Drops `n` bytes from the front of an iovec list.
void advance(std::vector<iovec>& v, size_t& first, size_t n) {
  while (n > 0 && first < v.size()) {
    size_t step = n < v[first].iov_len ? n : v[first].iov_len;
    v[first].iov_base = static_cast<char*>(v[first].iov_base) + step;
    v[first].iov_len -= step;
    n -= step;
    if (v[first].iov_len == 0) ++first;
  }
  while (first < v.size() && v[first].iov_len == 0) ++first;
}

bool copy(bool toRemote, pid_t pid, const iovec* local, size_t numLocal, const iovec* remote,
          size_t numRemote) {
  std::vector<iovec> l(local, local + numLocal), r(remote, remote + numRemote);
  size_t total = 0;
  for (const iovec& v : l) total += v.iov_len;
  size_t lf = 0, rf = 0;
  advance(l, lf, 0);
  advance(r, rf, 0);
  while (total > 0) {
    size_t ln = l.size() - lf, rn = r.size() - rf;
    if (ln > 1024) ln = 1024;  // IOV_MAX
    if (rn > 1024) rn = 1024;
    ssize_t n = toRemote ? process_vm_writev(pid, &l[lf], ln, &r[rf], rn, 0)
                         : process_vm_readv(pid, &l[lf], ln, &r[rf], rn, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    total -= static_cast<size_t>(n);
    advance(l, lf, static_cast<size_t>(n));
    advance(r, rf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool cmaRead(pid_t pid, const iovec* local, size_t numLocal, const iovec* remote,
             size_t numRemote) {
  return copy(false, pid, local, numLocal, remote, numRemote);
}

bool cmaWrite(pid_t pid, const iovec* local, size_t numLocal, const iovec* remote,
              size_t numRemote) {
  return copy(true, pid, local, numLocal, remote, numRemote);
}

}  // namespace rrt::tests::softrdma

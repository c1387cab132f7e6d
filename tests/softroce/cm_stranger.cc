// cm_stranger IP PORT garbage|wrongjob: a stranger's rdma_cm connection request to an rrt rank's
// listener (tests/softroce/rdmacm_auth.sh, in the Soft-RoCE guest). "garbage": private data that
// is not rrt's; "wrongjob": rrt's private data (address.h CmPrivate) with another job's hash.
// Exits 0 when the rank rejected the request, 1 when it accepted it, 2 when the request could
// not be made at all (no route, no listener: the test then proves nothing).
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/transport/verbs/address.h"

using rrt::transport::verbs::CmMsg;
using rrt::transport::verbs::CmPrivate;

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: cm_stranger IP PORT garbage|wrongjob\n");
    return 2;
  }
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(atoi(argv[2])));
  if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) return 2;
  uint8_t priv[48];
  memset(priv, 0x5a, sizeof priv);
  uint8_t len = sizeof priv;
  if (strcmp(argv[3], "wrongjob") == 0) {
    CmPrivate p{};
    p.magic = rrt::transport::verbs::kCmMagic;
    p.version = rrt::transport::verbs::kCmVersion;
    p.msg = static_cast<uint8_t>(CmMsg::Connect);
    p.src = 1;
    p.dst = 0;
    p.job = 0x0123456789abcdefull;  // not the job's hash
    memcpy(priv, &p, sizeof p);
    len = sizeof p;
  } else if (strcmp(argv[3], "garbage") != 0) {
    return 2;
  }
  rdma_cm_id* id = nullptr;  // no channel: librdmacm's synchronous mode
  if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP) ||
      rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), 2000) ||
      rdma_resolve_route(id, 2000)) {
    fprintf(stderr, "cm_stranger: cannot reach %s:%s: %s\n", argv[1], argv[2], strerror(errno));
    return 2;
  }
  rdma_conn_param cp{};
  cp.private_data = priv;
  cp.private_data_len = len;
  cp.responder_resources = 1;
  cp.initiator_depth = 1;
  cp.retry_count = 1;
  cp.qp_num = 0x4242;  // no QP: the request must be refused before anyone needs one
  if (rdma_connect(id, &cp) == 0) {
    printf("cm_stranger: %s:%s ACCEPTED a %s request\n", argv[1], argv[2], argv[3]);
    return 1;
  }
  const int err = errno;
  printf("cm_stranger: %s:%s refused a %s request: %s\n", argv[1], argv[2], argv[3], strerror(err));
  return err == ECONNREFUSED ? 0 : 2;
}

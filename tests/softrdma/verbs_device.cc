// Exported verbs: device list, context, device/port/GID/P_Key queries, sysfs and fork helpers.
#include <endian.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/softrdma/cq.h"
#include "tests/softrdma/device_caps.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/engine.h"
#include "tests/softrdma/objects.h"
#include "tests/softrdma/registry.h"
#include "tests/softrdma/verbs_ops.h"

#undef ibv_query_port

using namespace rrt::tests::softrdma;

namespace {

ibv_device* theDevice() {
  static ibv_device device = [] {
    ibv_device d{};
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d.name, sizeof d.name, "%s", kDeviceName);
    std::snprintf(d.dev_name, sizeof d.dev_name, "uverbs-softrdma0");
    // No sysfs behind this device: reads through these paths fail, as for a vanished device.
    std::snprintf(d.dev_path, sizeof d.dev_path, "/sys/class/infiniband_verbs/uverbs-softrdma0");
    std::snprintf(d.ibdev_path, sizeof d.ibdev_path, "/sys/class/infiniband/%s", kDeviceName);
    return d;
  }();
  return &device;
}

bool validPort(ibv_context* context, unsigned port) {
  return context && context->device == theDevice() && port == kPortNum;
}

void gidAt(int index, ibv_gid* gid) {
  std::memset(gid, 0, sizeof *gid);
  if (index == 0) {  // link-local, from the node GUID
    gid->raw[0] = 0xfe;
    gid->raw[1] = 0x80;
    uint64_t guid = htobe64(kNodeGuid);
    std::memcpy(gid->raw + 8, &guid, 8);
  } else {  // IPv4-mapped loopback, the RoCE v2 GID of 127.0.0.1
    gid->raw[10] = gid->raw[11] = 0xff;
    gid->raw[12] = 127;
    gid->raw[15] = 1;
  }
}

ibv_device_attr deviceAttr() {
  ibv_device_attr a{};
  std::snprintf(a.fw_ver, sizeof a.fw_ver, "softrdma 1.0");
  a.node_guid = htobe64(kNodeGuid);
  a.sys_image_guid = htobe64(kNodeGuid);
  a.max_mr_size = kMaxMrSize;
  a.page_size_cap = 0xfffff000;
  a.vendor_id = 0xffffff;  // as rxe: no IEEE OUI
  a.vendor_part_id = 0x5052;
  a.hw_ver = 1;
  a.max_qp = kMaxQp;
  a.max_qp_wr = kMaxQpWr;
  a.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_SYS_IMAGE_GUID;
  a.max_sge = kMaxSge;
  a.max_sge_rd = kMaxSge;
  a.max_cq = kMaxCq;
  a.max_cqe = kMaxCqe;
  a.max_mr = kMaxMr;
  a.max_pd = kMaxPd;
  a.max_qp_rd_atom = kMaxRdAtom;
  a.max_ee_rd_atom = 0;
  a.max_res_rd_atom = kMaxRdAtom * kMaxQp;
  a.max_qp_init_rd_atom = kMaxRdAtom;
  a.atomic_cap = IBV_ATOMIC_HCA;
  a.max_srq = kMaxSrq;
  a.max_srq_wr = kMaxSrqWr;
  a.max_srq_sge = kMaxSge;
  a.max_pkeys = kPkeyTableLen;
  a.local_ca_ack_delay = 15;
  a.phys_port_cnt = 1;
  return a;
}

}  // namespace

namespace rrt::tests::softrdma {

int queryPortOp(ibv_context* context, uint8_t port, ibv_port_attr* out, size_t size) {
  if (!validPort(context, port)) return EINVAL;
  ibv_port_attr a{};
  a.state = IBV_PORT_ACTIVE;
  a.max_mtu = IBV_MTU_4096;
  a.active_mtu = IBV_MTU_4096;
  a.gid_tbl_len = kGidTableLen;
  a.port_cap_flags = IBV_PORT_CM_SUP;
  a.max_msg_sz = kMaxMsgSize;
  a.pkey_tbl_len = kPkeyTableLen;
  a.lid = 0;  // Ethernet link layer: addressed by GID only
  a.max_vl_num = 1;
  a.active_width = 2;   // 4x
  a.active_speed = 32;  // EDR
  a.phys_state = 5;     // LinkUp
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  std::memcpy(out, &a, size < sizeof a ? size : sizeof a);
  return 0;
}

int queryDeviceExOp(ibv_context* context, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* out, size_t size) {
  ibv_device_attr_ex a{};
  a.orig_attr = deviceAttr();
  std::memcpy(out, &a, size < sizeof a ? size : sizeof a);
  return 0;
}

}  // namespace rrt::tests::softrdma

extern "C" {

ibv_device** ibv_get_device_list(int* numDevices) {
  auto** list = static_cast<ibv_device**>(std::calloc(2, sizeof(ibv_device*)));
  if (!list) {
    errno = ENOMEM;
    return nullptr;
  }
  list[0] = theDevice();
  if (numDevices) *numDevices = 1;
  return list;
}

void ibv_free_device_list(ibv_device** list) { std::free(list); }

const char* ibv_get_device_name(ibv_device* device) { return device->name; }

__be64 ibv_get_device_guid(ibv_device* device) { return htobe64(kNodeGuid); }

int ibv_get_device_index(ibv_device* device) { return 0; }

ibv_context* ibv_open_device(ibv_device* device) {
  if (device != theDevice()) {
    errno = ENODEV;
    return nullptr;
  }
  Registry::instance();
  auto* ctx = new Context();
  verbs_context& v = ctx->verbs;
  std::memset(&v, 0, sizeof v);
  v.sz = sizeof(verbs_context);
  v.query_port = queryPortOp;
  v.query_device_ex = queryDeviceExOp;
  ibv_context& c = v.context;
  c.device = device;
  c.ops.poll_cq = pollCq;
  c.ops.req_notify_cq = reqNotifyCq;
  c.ops.post_send = postSendOp;
  c.ops.post_recv = postRecvOp;
  c.ops.post_srq_recv = postSrqRecvOp;
  c.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) die("ibv_open_device", "pipe: %s", std::strerror(errno));
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  c.async_fd = fds[0];
  ctx->asyncWriteFd = fds[1];
  c.num_comp_vectors = 1;
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = __VERBS_ABI_IS_EXTENDED;
  Engine::acquire();
  return &c;
}

int ibv_close_device(ibv_context* context) {
  Context* ctx = Context::from(context);
  Engine::release();
  close(context->cmd_fd);
  close(context->async_fd);
  close(ctx->asyncWriteFd);
  pthread_mutex_destroy(&context->mutex);
  delete ctx;
  return 0;
}

int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  *attr = deviceAttr();
  return 0;
}

// The IBVERBS_1.1 symbol: programs built against old headers pass the short (compat) struct,
// so only the fields up to link_layer are written.
int ibv_query_port(ibv_context* context, uint8_t port, struct _compat_ibv_port_attr* attr) {
  return queryPortOp(context, port, reinterpret_cast<ibv_port_attr*>(attr),
                     offsetof(ibv_port_attr, flags));
}

int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  if (!validPort(context, port) || index < 0 || index >= kGidTableLen) return -1;
  gidAt(index, gid);
  return 0;
}

int _ibv_query_gid_ex(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                      uint32_t flags, size_t entrySize) {
  if (!validPort(context, port) || index >= static_cast<uint32_t>(kGidTableLen) || flags)
    return EINVAL;
  ibv_gid_entry e{};
  gidAt(static_cast<int>(index), &e.gid);
  e.gid_index = index;
  e.port_num = port;
  e.gid_type = IBV_GID_TYPE_ROCE_V2;
  e.ndev_ifindex = 1;  // lo
  std::memcpy(entry, &e, entrySize < sizeof e ? entrySize : sizeof e);
  return 0;
}

ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries, size_t maxEntries,
                             uint32_t flags, size_t entrySize) {
  if (flags || entrySize < sizeof(ibv_gid_entry)) return -EINVAL;
  size_t n = 0;
  for (; n < maxEntries && n < static_cast<size_t>(kGidTableLen); ++n) {
    auto* entry = reinterpret_cast<ibv_gid_entry*>(reinterpret_cast<char*>(entries) + n * entrySize);
    _ibv_query_gid_ex(context, kPortNum, static_cast<uint32_t>(n), entry, 0, entrySize);
  }
  return static_cast<ssize_t>(n);
}

// IBVERBS_PRIVATE_34 (used by ibv_devinfo); the type enum is ibv_gid_type_sysfs: 1 = RoCE v2.
int ibv_query_gid_type(ibv_context* context, uint8_t port, unsigned index, int* type) {
  if (!validPort(context, port) || index >= static_cast<unsigned>(kGidTableLen)) return -1;
  *type = 1;
  return 0;
}

int ibv_query_pkey(ibv_context* context, uint8_t port, int index, __be16* pkey) {
  if (!validPort(context, port) || index < 0 || index >= kPkeyTableLen) return -1;
  *pkey = htobe16(kDefaultPkey);
  return 0;
}

int ibv_get_pkey_index(ibv_context* context, uint8_t port, __be16 pkey) {
  if (!validPort(context, port) || be16toh(pkey) != kDefaultPkey) return -1;
  return 0;
}

// Nothing is pinned (data moves by CMA), so a fork needs no precautions.
int ibv_fork_init(void) { return 0; }
enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }
int ibv_dontfork_range(void* base, size_t size) { return 0; }
int ibv_dofork_range(void* base, size_t size) { return 0; }

int ibv_get_sysfs_path(char* buffer, size_t size) {
  return std::snprintf(buffer, size, "/sys") < static_cast<int>(size) ? 0 : -1;
}

int ibv_read_sysfs_file(const char* dir, const char* file, char* buffer, size_t size) {
  char path[512];
  std::snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buffer, size);
  close(fd);
  if (n <= 0) return -1;
  if (static_cast<size_t>(n) == size) --n;
  if (n > 0 && buffer[n - 1] == '\n') --n;
  buffer[n] = '\0';
  return static_cast<int>(n);
}

}  // extern "C"

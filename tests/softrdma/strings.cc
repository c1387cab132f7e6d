// Exported verbs: the enum-to-text helpers, with libibverbs' wording.
#include <infiniband/verbs.h>

namespace {

template <size_t N>
const char* pick(const char* const (&table)[N], int value) {
  return value >= 0 && static_cast<size_t>(value) < N && table[value] ? table[value] : "unknown";
}

}  // namespace

extern "C" {

const char* ibv_node_type_str(enum ibv_node_type type) {
  static const char* const kNames[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch",
                                       "InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP",
                                       "unspecified"};
  return pick(kNames, type);
}

const char* ibv_port_state_str(enum ibv_port_state state) {
  static const char* const kNames[] = {"no state change (NOP)", "down", "init", "armed", "active",
                                       "active defer"};
  return pick(kNames, state);
}

const char* ibv_event_type_str(enum ibv_event_type event) {
  static const char* const kNames[] = {
      "CQ error", "local work queue catastrophic error", "invalid request local work queue error",
      "local access violation work queue error", "communication established",
      "send queue drained", "path migrated", "path migration request error",
      "local catastrophic error", "port active", "port error", "LID change", "P_Key change",
      "SM change", "SRQ catastrophic error", "SRQ limit reached", "last WQE reached",
      "client reregistration", "GID table change", "WQ fatal"};
  return pick(kNames, event);
}

const char* ibv_wc_status_str(enum ibv_wc_status status) {
  static const char* const kNames[] = {"success",
                                       "local length error",
                                       "local QP operation error",
                                       "local EE context operation error",
                                       "local protection error",
                                       "Work Request Flushed Error",
                                       "memory management operation error",
                                       "bad response error",
                                       "local access error",
                                       "remote invalid request error",
                                       "remote access error",
                                       "remote operation error",
                                       "transport retry counter exceeded",
                                       "RNR retry counter exceeded",
                                       "local RDD violation error",
                                       "remote invalid RD request",
                                       "aborted error",
                                       "invalid EE context number",
                                       "invalid EE context state",
                                       "fatal error",
                                       "response timeout error",
                                       "general error",
                                       "TM error",
                                       "TM software rendezvous"};
  return pick(kNames, status);
}

}  // extern "C"

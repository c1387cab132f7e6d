// Fixed identity and limits of the one emulated device, "softrdma0".
// Contract: plain data, shared by query functions (what the device says) and by validation (what
// it enforces); a limit reported here is a limit checked somewhere, never only printed.
#pragma once

#include <cstdint>

namespace rrt::tests::softrdma {

inline constexpr const char* kDeviceName = "softrdma0";
inline constexpr uint64_t kNodeGuid = 0x02005eff'fe000001ULL;  // host order; EUI-64 style
inline constexpr uint8_t kPortNum = 1;                             // the only port
inline constexpr int kGidTableLen = 2;                             // fe80::guid, ::ffff:127.0.0.1
inline constexpr int kPkeyTableLen = 1;                            // 0xffff only
inline constexpr uint16_t kDefaultPkey = 0xffff;

inline constexpr uint32_t kMaxQp = 16384;
inline constexpr uint32_t kMaxQpWr = 16384;
inline constexpr uint32_t kMaxSge = 16;
inline constexpr uint32_t kMaxInline = 1024;
inline constexpr uint32_t kMaxCq = 16384;
inline constexpr uint32_t kMaxCqe = 1 << 20;
inline constexpr uint32_t kMaxMr = 1 << 20;
inline constexpr uint32_t kMaxPd = 1 << 16;
inline constexpr uint32_t kMaxRdAtom = 128;
inline constexpr uint32_t kMaxSrq = 4096;
inline constexpr uint32_t kMaxSrqWr = 16384;
inline constexpr uint64_t kMaxMrSize = 1ULL << 40;
inline constexpr uint32_t kMaxMsgSize = 1U << 31;  // the IB limit (2 GiB)

// Requests one QP keeps in flight before waiting for acknowledgements (the "send window").
inline constexpr uint32_t kSendWindow = 128;

}  // namespace rrt::tests::softrdma

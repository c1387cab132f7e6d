// The pinning model, opt-in (SOFTRDMA_PIN_CHECK=1): a NIC reads and writes the physical pages it
// pinned at ibv_reg_mr, not whatever the virtual range maps later. When the application unmaps a
// registered range and maps new memory at the same address, hardware silently moves stale data.
// This device, which copies by virtual address, would hide that bug; with the check on it records
// the page frames of every MR at registration (from /proc/self/pagemap, after faulting the pages
// in for writing as get_user_pages does) and fails any access through an MR whose frames changed:
// IBV_WC_REM_ACCESS_ERR at the requester for an rkey, IBV_WC_LOC_PROT_ERR for an lkey, with a
// line on stderr naming the key. Off by default: without real pinning the kernel may migrate a
// page (compaction, khugepaged), which the check would take for a remap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rrt::tests::softrdma {

bool pinCheckEnabled();
// Frames of the pages of [addr, addr+len), faulting them in first (for writing when writable);
// empty when disabled or unreadable (no CAP_SYS_ADMIN: frames read as 0).
std::vector<uint64_t> pinFrames(void* addr, size_t len, bool writable);
// The frames of [addr, addr+len) now, compared with those recorded for the MR starting at base.
bool framesChanged(const std::vector<uint64_t>& recorded, const void* base, const void* addr,
                   size_t len);

}  // namespace rrt::tests::softrdma

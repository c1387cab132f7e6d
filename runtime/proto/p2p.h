// Point-to-point operations of the protocol layer, in bytes, on an explicit context id.
// The C API calls them with comm.ctx; collectives with comm.collCtx() and a tag that is the
// collective's sequence number, so concurrent collectives on one communicator never mix.
//
// Both return Ok with *out set to a request that completes later (check (*out)->complete or set
// onComplete), or an error with *out untouched. Ranks are ranks of comm; RRT_PROC_NULL gives a
// request that is already complete. The caller releases completed requests with
// core::requestRelease (or through rrt_wait for user requests).
#pragma once

#include <cstddef>

#include "runtime/core/request.h"
#include "runtime/proto/comm.h"

namespace rrt::proto {

Status isend(Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst, int tag,
             uint8_t sendFlags, core::Request** out);
Status irecv(Comm& comm, uint32_t ctx, void* buf, size_t bytes, int src, int tag,
             core::Request** out);
// Probe: Ok with *found and *status filled (no removal).
Status iprobe(Comm& comm, uint32_t ctx, int src, int tag, bool* found, rrt_status_t* status);
// Matched probe: takes the first unexpected message a receive for (src, tag) would match out of
// matching, so that no other receive can take it, and hands it back as *msg (nullptr: none yet)
// with its envelope in *status. Only imrecv receives it then. src must not be RRT_PROC_NULL.
Status improbe(Comm& comm, uint32_t ctx, int src, int tag, core::Request** msg,
               rrt_status_t* status);
// Receives the message improbe took into buf (bytes long: a longer message is truncated, as a
// receive's). msg is consumed.
Status imrecv(core::Request* msg, void* buf, size_t bytes, core::Request** out);
// Cancel a posted receive (no effect if it already matched) or a send (Engine::cancelSend:
// dropped unless the receiver matched it). Either way r then completes; status.cancelled
// says whether the operation was cancelled.
Status cancel(core::Request* r);

}  // namespace rrt::proto

namespace rrt::proto {
// Waits for r (driving progress), copies its status out (if status != nullptr), releases it,
// and returns its error (Ok, or e.g. ErrTruncate / ErrProcFailed / ErrTimeout).
Status waitRelease(core::Request* r, rrt_status_t* status);
}  // namespace rrt::proto

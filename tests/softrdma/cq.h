// Completion queues and completion channels of the software RDMA device.
// Contract: pushCompletion is called by the engine (engine lock held) and takes the CQ's own lock;
// pollCq/reqNotifyCq are the context ops behind the inline ibv_poll_cq/ibv_req_notify_cq and take
// only the CQ lock. A CQ overrun aborts (hardware would raise IBV_EVENT_CQ_ERR and break the QPs).
// A channel is a pipe carrying ibv_cq pointers; ibv_get_cq_event skips CQs destroyed meanwhile.
#pragma once

#include "tests/softrdma/objects.h"

namespace rrt::tests::softrdma {

void pushCompletion(Cq& cq, const ibv_wc& wc, bool solicited);
int pollCq(ibv_cq* cq, int numEntries, ibv_wc* wc);
int reqNotifyCq(ibv_cq* cq, int solicitedOnly);

// Registry of live CQs: an event read from a channel for a CQ destroyed meanwhile is skipped.
void cqBorn(Cq* cq);
void cqDied(Cq* cq);
// Counts an event delivered for `cq`; false if the CQ is no longer alive.
bool cqTakeEvent(ibv_cq* cq);

}  // namespace rrt::tests::softrdma

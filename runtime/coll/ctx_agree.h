// Agreeing on a new communicator's context id among its members, blocking (comm_split, dup,
// create_group, create_inter) or as a request (comm_idup). See ctx_agree.cc.
#pragma once

#include <cstdint>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/core/request.h"
#include "runtime/core/status.h"
#include "runtime/proto/comm.h"

namespace rrt::coll {

// Collective over members (ranks of parent, members[0] leads; the caller is one of them); tag:
// a negative tag of the caller's, distinct from any other exchange that may run on parent at
// the same time. *ctx: the id, unused in every member.
Status agreeContext(proto::Comm& parent, const std::vector<int>& members, int tag, uint32_t* ctx);

// Collective over all of parent, as one of its collectives (its sequence number is the tag):
// the request completes once the duplicate exists, its handle then in *newcomm (which must
// stay valid until then).
Status startCommIdup(proto::Comm& parent, rrt_comm_t* newcomm, core::Request** out);

}  // namespace rrt::coll

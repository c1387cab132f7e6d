// The self transport: messages from a rank to itself. Active messages are copied into a queue
// and delivered from progress() (never from inside amSend, so the protocol layer is not
// re-entered); get/put are memcpy within the process.
#pragma once

#include "runtime/transport/transport.h"

namespace rrt::transport::self {

TransportPtr create(const Context& ctx, Status* st);

}  // namespace rrt::transport::self

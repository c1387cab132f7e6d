// The TCP transport: one authenticated, non-blocking stream per peer pair (optionally more to
// stripe large puts over), driven by epoll.
//
// Contract beyond transport.h:
//   create()   needs ctx.size >= 2 and the job secret (ctx.secret, kSecretBytes; see
//              wireup.h for where it comes from). Chooses addresses (RRT_TCP_IF,
//              interfaces.h) and listens on an ephemeral port; address() publishes them.
//   connect()  only records the peer's addresses. The socket is opened lazily by the first
//              amSend/put to that peer; data sent before the connection is up is queued.
//   Connect race: both ranks may connect at once. Each side sends a Hello (frame.h) first
//              and uses a connection only after the acceptor's Hello said "accept". An
//              acceptor accepts a connection from a lower rank always (dropping its own
//              attempt to that rank, which carried no data), and one from a higher rank only
//              when it has no attempt of its own; a rejected connector waits for the peer's
//              connection (which is then on its way). So exactly the lower rank's connection
//              survives a crossing, on both sides, whatever the timing.
//   Stripe streams (RRT_TCP_STREAMS = N > 1; a pair uses the smaller N of its two ranks, which
//              each names in its Hello): right after the pair's first connection is
//              established, the rank whose connection it is opens N - 1 more to the same
//              address, each with a Hello naming its stream (1..N-1); the other rank takes
//              stream k only from a peer it is established with, once. A put of at least
//              RRT_TCP_STRIPE_MIN bytes, once all stripes are up, is cut in N page-aligned
//              parts: part k goes as a PUT frame on stream k (its own address, so it lands at
//              its offset); stream 0 carries part 0 and then a stripe mark (frame.h) with the
//              other parts' sizes. The receiver reads nothing after the mark on stream 0 until
//              that many bytes have landed from each stripe stream, so kOrdered still holds:
//              the FIN after a striped put arrives after all of its data. AMs only ever travel
//              on stream 0. The put's Completion fires when every part is written. A stripe
//              stream that fails (set-up included) fails the peer.
//   Authentication: a connection whose Hello lacks the job secret, names an impossible rank,
//              or does not arrive within RRT_TCP_TIMEOUT is logged and closed; nothing it sent
//              is parsed as a frame.
//   amSend()   writes frame header + header + payload with one sendmsg when nothing is queued
//              (Ok); what the kernel does not take is copied to the peer's queue (Ok), sent
//              from progress(). NoResource when the queue holds more than kMaxQueuedBytes.
//   put()      PUT frame: header and payload leave by sendmsg straight from the caller's
//              buffer (no copy). Ok when the kernel took it all, else InProgress and the
//              Completion fires from progress() once the last byte is written.
//              The receiver checks addr/len against the region registered under the rkey's
//              cookie and reads the payload straight into it (readv, no copy).
//              Puts and active messages to one peer stay in order (kOrdered), so the FIN the
//              protocol sends after its puts arrives after the data.
//   get()      unsupported: TCP has no one-sided read (the protocol uses RPUT).
//   memReg()   a table entry with a random 64-bit cookie; the rkey is the cookie.
//   Failures:  reset, EOF, send errors, a failed connect, kernel timeouts (TCP_USER_TIMEOUT
//              and keepalive at RRT_TCP_TIMEOUT) or a malformed frame mark the peer dead: its
//              queued puts complete with ErrProcFailed and ctx.peerFailed is called once,
//              always from progress(), never from inside amSend/put (which return
//              ErrProcFailed).
//   progress() one epoll_wait(0); reads every readable socket (AMs delivered from the receive
//              buffer, in order), writes queued data. A handler that re-enters progress()
//              gets 0.
#pragma once

#include "runtime/core/status.h"
#include "runtime/transport/transport.h"

namespace rrt::transport::tcp {

TransportPtr create(const Context& ctx, Status* st);

}  // namespace rrt::transport::tcp

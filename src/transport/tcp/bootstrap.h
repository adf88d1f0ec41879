// Mesh bootstrap: turns a Store and a rank into one connected, verified TCP
// socket per peer. Protocol:
//   1. listen on the selected address (address.h), port chosen by the kernel,
//      with the within-host congestion control (congestion.h);
//   2. publish "tcp/meta/<rank>" = "<nonce> <hostname>", then
//      "tcp/addr/<rank>" = "ip:port" (meta first, so addr implies meta);
//   3. wait for every rank's keys (names the ranks missing on timeout);
//   4. connect to every lower rank (retrying with backoff: a listener can be
//      briefly unreachable), send a Hello carrying the peer's nonce and our
//      own, wait for the reply; then accept one connection from every higher
//      rank, rejecting any whose Hello does not match the store (a stray or
//      stale connection from another job or round);
//   5. give each connection the congestion control the plan wants for it
//      (a connection accepted from another host leaves the listener's).
// Lower ranks never connect out before accepting, so the chain of waits ends
// at rank 0 and cannot deadlock; it costs O(size) round trips, fine for the
// hundreds of ranks a TCP mesh is meant for.
#pragma once

#include <string>
#include <vector>

#include "rendezvous/store.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::transport::tcp {

struct MeshSockets {
  std::vector<UniqueFd> peers;     // indexed by rank; invalid at our own rank
  std::vector<std::string> hosts;  // hostname of every rank, for error messages
};

MeshSockets build_mesh(rendezvous::Store& store, int rank, int size, const TcpOptions& options);

}  // namespace kolo::transport::tcp

// Builds a full TCP mesh among `size` ranks that meet in a Store.
#pragma once

#include <memory>

#include "rendezvous/store.h"
#include "transport/context.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::transport::tcp {

// Each rank listens on an address chosen from `options`, publishes
// "host:port" under key "tcp/addr/<rank>" in `store` (callers scope the
// store with a PrefixStore per job/round), and connects to every peer.
// Throws TimeoutError naming the ranks that never showed up within
// options.connect_timeout.
std::unique_ptr<Context> connect_full_mesh(rendezvous::Store& store, int rank, int size,
                                           const TcpOptions& options);

// What the library connects with (backends/registry.cc, core/world.cc):
// a plain full mesh for options.streams == 1 (or a world of one rank), else
// options.streams meshes - the first under the keys above, stream i under
// "stream<i>/" - joined into a StripedContext (transport/striped_context.h).
// Every rank must use the same streams and stripe_threshold, since both
// decide how a message is cut: rank 0 publishes its values and any other
// rank whose values differ throws InvalidArgument naming both.
std::unique_ptr<Context> connect(rendezvous::Store& store, int rank, int size,
                                 const TcpOptions& options);

}  // namespace kolo::transport::tcp

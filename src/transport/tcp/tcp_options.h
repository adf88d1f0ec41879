// Settings of the TCP transport; filled from the job's settings by
// tcp_options_from (tcp_settings.h; see docs/config.md).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>

namespace kolo::transport::tcp {

struct TcpOptions {
  // Network interface whose IPv4 address this rank listens on and publishes
  // (KOLO_IFACE). Empty: use `address`, else the address that routes to
  // `route_hint`, else the first non-loopback IPv4 interface, else 127.0.0.1.
  std::string iface;
  // Explicit address to listen on and publish (KOLO_ADDRESS).
  std::string address;
  // Host whose route picks the interface when neither of the above is set;
  // normally the rendezvous server's host.
  std::string route_hint;
  // This rank's host as peers' errors name it ("rank 3 (host b) lost"):
  // the name the launcher was given for it (KOLO_HOSTNAME, as in -H), which
  // is what the user knows; empty: the machine's hostname.
  std::string host_name;
  // How long to keep retrying connections and waiting for peers to publish
  // their addresses while the mesh is built (KOLO_START_TIMEOUT, the same
  // limit as for reaching the store).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  // Longest wait for any single send or receive before it fails naming the
  // peer (KOLO_TIMEOUT_SECONDS).
  std::chrono::milliseconds op_timeout{std::chrono::seconds(300)};
  // Liveness. A peer from which nothing (data or heartbeat) has arrived for
  // this long is declared lost, even though its connection is still open: a
  // stopped or wedged process, or a host gone without a FIN
  // (KOLO_PEER_TIMEOUT_SECONDS). The progress thread sends a heartbeat on
  // any connection idle for heartbeat_interval() and reads every socket
  // whether or not a receive is posted, so a live peer is never silent that
  // long, however long its program computes between collectives; keep it
  // well below op_timeout so the rank that stopped is the one blamed, not a
  // healthy rank that waits on it.
  std::chrono::milliseconds peer_timeout{std::chrono::seconds(6)};
  // How often an idle connection beats (KOLO_HEARTBEAT_INTERVAL); see
  // heartbeat_interval() for the bound the peer timeout puts on it.
  std::chrono::milliseconds heartbeat{500};
  // SO_SNDBUF / SO_RCVBUF requested for data connections
  // (KOLO_SOCKET_BUFFER_BYTES); 0 leaves the kernel's autotuning alone.
  size_t socket_buffer_bytes = 4u << 20;
  // TCP congestion control of the data connections (KOLO_TCP_CONGESTION,
  // see congestion.h): "auto" gives connections within a host an unpaced
  // algorithm and leaves those between hosts on the host's default;
  // "system" leaves every connection on the default; any other value is an
  // algorithm's name for every connection.
  std::string congestion = "auto";
  // A caller waiting on a send or receive of up to 64 KiB polls without
  // sleeping for up to this long before it blocks in epoll_wait, yielding
  // its core between polls; data arriving in that time then skips a sleep
  // and wake-up (KOLO_SPIN_MICROSECONDS). On an idle VM a wake-up costs
  // ~30 us, which was the whole small-message latency; yielding keeps the
  // spin cheap when cores are oversubscribed.
  std::chrono::microseconds spin{50};
  // Connections per peer (KOLO_TCP_STREAMS): with more than one, the
  // factory connect() builds that many independent meshes, each with its own
  // sockets and progress thread, and cuts messages of at least
  // stripe_threshold bytes across them (transport/striped_context.h). One
  // connection's window and one core's copies can limit a fast link between
  // hosts; on loopback with few cores extra streams only add overhead.
  // Every rank must use the same value.
  int streams = 1;
  static constexpr int kMaxStreams = 16;
  // Smallest message cut across the streams (KOLO_TCP_STRIPE_BYTES); must be
  // the same on every rank. At or below the ring's chunk size
  // (KOLO_RING_CHUNK_BYTES), or the ring allreduce never stripes.
  size_t stripe_threshold = 256u << 10;

  // At least three heartbeats per peer timeout (a few may be late on a
  // loaded host), whatever the two settings say: the cost is a 32-byte frame
  // per idle connection and interval.
  std::chrono::milliseconds heartbeat_interval() const {
    auto interval = std::min<std::chrono::milliseconds>(heartbeat, peer_timeout / 3);
    return std::max<std::chrono::milliseconds>(interval, std::chrono::milliseconds(1));
  }
};

}  // namespace kolo::transport::tcp

#include "transport/tcp/tcp_settings.h"

#include <algorithm>

namespace kolo::transport::tcp {

TcpOptions tcp_options_from(const settings::Values& v) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  TcpOptions tcp;
  tcp.iface = v.text("KOLO_IFACE");
  tcp.address = v.text("KOLO_ADDRESS");
  // The rendezvous server's host routes to the interface peers can reach,
  // and the mesh gets as long to form as the store does.
  tcp.route_hint = v.text("KOLO_RENDEZVOUS_ADDR");
  tcp.host_name = v.text("KOLO_HOSTNAME");
  tcp.connect_timeout = v.duration<milliseconds>("KOLO_START_TIMEOUT");
  tcp.op_timeout = v.duration<milliseconds>("KOLO_TIMEOUT_SECONDS");
  tcp.peer_timeout = v.duration<milliseconds>("KOLO_PEER_TIMEOUT_SECONDS");
  tcp.heartbeat = v.duration<milliseconds>("KOLO_HEARTBEAT_INTERVAL");
  // A rank silent for the stall shutdown time (a frozen process, which
  // submits nothing and answers no negotiation) is a stall the user asked to
  // end then: the negotiation waits on it, so the stall inspector never
  // sees it, but its silence is seen here.
  const auto stall_shutdown = v.duration<milliseconds>("KOLO_STALL_SHUTDOWN_TIME_SECONDS");
  if (!v.boolean("KOLO_STALL_CHECK_DISABLE") && stall_shutdown.count() > 0)
    tcp.peer_timeout = std::min(tcp.peer_timeout, stall_shutdown);
  tcp.socket_buffer_bytes = v.bytes("KOLO_SOCKET_BUFFER_BYTES");
  tcp.spin = microseconds(v.integer("KOLO_SPIN_MICROSECONDS"));
  tcp.streams = static_cast<int>(v.integer("KOLO_TCP_STREAMS"));
  tcp.stripe_threshold = v.bytes("KOLO_TCP_STRIPE_BYTES");
  tcp.congestion = v.text("KOLO_TCP_CONGESTION");
  return tcp;
}

}  // namespace kolo::transport::tcp

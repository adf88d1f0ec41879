#include "transport/tcp/bootstrap.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "common/error.h"
#include "common/logging.h"
#include "common/machine.h"
#include "transport/tcp/address.h"
#include "transport/tcp/congestion.h"
#include "transport/tcp/wire.h"

namespace kolo::transport::tcp {

namespace {

std::string addr_key(int rank) {
  return "tcp/addr/" + std::to_string(rank);
}
std::string meta_key(int rank) {
  return "tcp/meta/" + std::to_string(rank);
}

uint64_t random_nonce() {
  std::random_device device;
  uint64_t nonce = (uint64_t{device()} << 32) ^ device();
  return nonce ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}

double seconds(std::chrono::milliseconds d) {
  return static_cast<double>(d.count()) / 1000.0;
}

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("{}", fmt::join(ranks, ", "));
}

struct PeerEntry {
  std::string ip;
  int port = 0;
  uint64_t nonce = 0;
  std::string host;
};

PeerEntry parse_entry(int rank, const std::string& addr, const std::string& meta) {
  PeerEntry e;
  auto colon = addr.rfind(':');
  auto space = meta.find(' ');
  try {
    if (colon == std::string::npos || space == std::string::npos) throw std::invalid_argument("");
    e.ip = addr.substr(0, colon);
    e.port = std::stoi(addr.substr(colon + 1));
    e.nonce = std::stoull(meta.substr(0, space), nullptr, 16);
    e.host = meta.substr(space + 1);
  } catch (const std::exception&) {
    throw InvalidArgument(fmt::format("malformed TCP address of rank {} in the store: '{}' / '{}'",
                                      rank, addr, meta));
  }
  return e;
}

// Waits for every rank's published entry; TimeoutError names the laggards.
std::vector<PeerEntry> gather_entries(rendezvous::Store& store, int rank, int size,
                                      const TcpOptions& options) {
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(addr_key(r));
  try {
    store.wait(keys, options.connect_timeout);
  } catch (const TimeoutError&) {
    std::vector<int> missing;
    for (int r = 0; r < size; ++r)
      if (!store.get(addr_key(r))) missing.push_back(r);
    if (missing.empty()) throw;
    throw TimeoutError(fmt::format(
        "rank {}: timed out after {} s waiting for rank(s) {} to publish their TCP address", rank,
        seconds(options.connect_timeout), rank_list(missing)));
  }
  std::vector<PeerEntry> entries(size);
  for (int r = 0; r < size; ++r) {
    auto addr = store.get(addr_key(r));
    auto meta = store.get(meta_key(r));
    if (!addr || !meta) throw IoError(fmt::format("store lost the TCP address of rank {}", r));
    entries[r] = parse_entry(r, rendezvous::to_string(*addr), rendezvous::to_string(*meta));
  }
  return entries;
}

// `congestion`: the algorithm to connect with (congestion.h).
UniqueFd connect_to_lower(int rank, int peer, const PeerEntry& entry, uint64_t my_nonce, int size,
                          const TcpOptions& options, const std::string& congestion,
                          Clock::time_point deadline) {
  auto backoff = std::chrono::milliseconds(5);
  std::string last_error;
  for (;;) {
    int err = 0;
    UniqueFd fd =
        try_connect(entry.ip, entry.port, options.socket_buffer_bytes, congestion, deadline, &err);
    if (fd.valid()) {
      Hello hello;
      hello.acceptor_nonce = entry.nonce;
      hello.connector_nonce = my_nonce;
      hello.connector_rank = rank;
      hello.size = size;
      HelloReply reply;
      if (write_all_until(fd.get(), &hello, sizeof(hello), deadline, &err) &&
          read_all_until(fd.get(), &reply, sizeof(reply), deadline, &err)) {
        if (reply.magic == HelloReply::kMagic && reply.acceptor_rank == peer) return fd;
        last_error = "unexpected hello reply";
      } else {
        last_error = "hello exchange failed: " + connection_error_text(err);
      }
    } else {
      last_error = connection_error_text(err);
    }
    if (Clock::now() + backoff >= deadline) break;
    KOLO_LOG_DEBUG("rank {}: connecting to rank {} at {}:{} failed ({}); retrying", rank, peer,
                   entry.ip, entry.port, last_error);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
  throw TimeoutError(fmt::format(
      "rank {}: could not connect to rank {} (host {}) at {}:{} within {} s: {}", rank, peer,
      entry.host, entry.ip, entry.port, seconds(options.connect_timeout), last_error));
}

// Reads and checks one Hello; returns the connector's rank or -1 to reject.
int verify_hello(int fd, int rank, int size, uint64_t my_nonce,
                 const std::vector<PeerEntry>& entries, const std::vector<UniqueFd>& peers,
                 Clock::time_point deadline) {
  Hello hello;
  int err = 0;
  // A stray connection that never speaks must not eat the whole timeout.
  auto hello_deadline = std::min(deadline, Clock::now() + std::chrono::seconds(5));
  if (!read_all_until(fd, &hello, sizeof(hello), hello_deadline, &err)) return -1;
  int from = hello.connector_rank;
  bool ok = hello.magic == Hello::kMagic && hello.acceptor_nonce == my_nonce &&
            hello.size == size && from > rank && from < size && !peers[from].valid() &&
            hello.connector_nonce == entries[from].nonce;
  return ok ? from : -1;
}

}  // namespace

MeshSockets build_mesh(rendezvous::Store& store, int rank, int size, const TcpOptions& options) {
  if (size < 1 || rank < 0 || rank >= size)
    throw InvalidArgument(fmt::format("bad rank {} for world size {}", rank, size));
  const auto deadline = Clock::now() + options.connect_timeout;
  const std::string ip = select_listen_address(options);
  int port = 0;
  const CongestionPlan congestion = plan_congestion(options.congestion);
  UniqueFd listener =
      listen_on(ip, std::max(size, 16), options.socket_buffer_bytes, congestion.within_host, &port);
  const uint64_t nonce = random_nonce();

  MeshSockets mesh;
  mesh.peers.resize(size);
  const std::string host = options.host_name.empty() ? local_hostname() : options.host_name;
  store.set(meta_key(rank), rendezvous::to_bytes(fmt::format("{:x} {}", nonce, host)));
  store.set(addr_key(rank), rendezvous::to_bytes(fmt::format("{}:{}", ip, port)));
  KOLO_LOG_DEBUG("rank {}: listening on {}:{}", rank, ip, port);

  auto entries = gather_entries(store, rank, size, options);
  for (const auto& e : entries) mesh.hosts.push_back(e.host);

  // A peer that listens on our own address shares our host (as
  // same_host_connection() will see it once connected).
  for (int peer = 0; peer < rank; ++peer)
    mesh.peers[peer] = connect_to_lower(
        rank, peer, entries[peer], nonce, size, options,
        entries[peer].ip == ip ? congestion.within_host : congestion.across_hosts, deadline);

  int waiting = size - 1 - rank;
  while (waiting > 0) {
    UniqueFd fd = accept_until(listener.get(), deadline);
    if (!fd.valid()) {
      std::vector<int> missing;
      for (int r = rank + 1; r < size; ++r)
        if (!mesh.peers[r].valid()) missing.push_back(r);
      throw TimeoutError(
          fmt::format("rank {}: timed out after {} s waiting for rank(s) {} to connect", rank,
                      seconds(options.connect_timeout), rank_list(missing)));
    }
    int from = verify_hello(fd.get(), rank, size, nonce, entries, mesh.peers, deadline);
    if (from < 0) {
      KOLO_LOG_WARNING("rank {}: rejected a connection with a bad or stale hello", rank);
      continue;
    }
    HelloReply reply;
    reply.acceptor_rank = rank;
    int err = 0;
    if (!write_all_until(fd.get(), &reply, sizeof(reply), deadline, &err)) continue;
    mesh.peers[from] = std::move(fd);
    --waiting;
  }
  for (int peer = 0; peer < size; ++peer)
    if (mesh.peers[peer].valid()) {
      set_data_socket_options(mesh.peers[peer].get(), 0);
      settle_congestion(mesh.peers[peer].get(), congestion);
    }
  return mesh;
}

}  // namespace kolo::transport::tcp

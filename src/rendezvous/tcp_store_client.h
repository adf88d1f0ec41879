// TcpStoreClient: a Store backed by a TcpStoreServer.
//
// Thread model: any number of threads may call one client at once. Requests
// are pipelined on one connection (a thread parked in wait() does not hold
// up the others); a background reader thread matches replies to callers by
// sequence number. Writes are serialised by a mutex and bounded by
// io_timeout.
//
// Failure model: the constructor connects with retry and backoff until
// connect_timeout (the server may start after the client), exchanges hellos
// and pings to check the secret, so a wrong one throws AuthError at once.
// Each call is bounded by io_timeout (wait(): its own timeout plus
// io_timeout). A lost connection is final: that call and every later one
// throws IoError("lost connection to rendezvous server H:P: ..."), because
// replaying a non-idempotent ADD on a new connection could count twice.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "kolo/status.h"
#include "rendezvous/socket_util.h"
#include "rendezvous/store.h"
#include "rendezvous/store_wire.h"

namespace kolo::rendezvous {

struct TcpStoreClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string secret;  // the job secret (KOLO_SECRET); required
  std::chrono::milliseconds connect_timeout{30'000};
  std::chrono::milliseconds io_timeout{30'000};
  size_t max_frame_bytes = wire::kDefaultMaxFrameBytes;
};

class TcpStoreClient final : public Store {
 public:
  explicit TcpStoreClient(TcpStoreClientOptions options);
  ~TcpStoreClient() override;
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  std::optional<Bytes> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  CompareSetResult compare_set(const std::string& key, const std::optional<Bytes>& expected,
                               const Bytes& desired) override;
  bool remove(const std::string& key) override;

  // "host:port", as used in error messages.
  const std::string& server_name() const { return server_name_; }

 private:
  struct Failure {
    StatusCode code;
    std::string message;
  };
  struct Pending {
    bool done = false;
    StatusCode status = StatusCode::kOk;
    Bytes payload;
  };

  void connect_with_retry();
  void handshake(net::Clock::time_point deadline);
  wire::Reply call(const wire::Request& request, std::chrono::milliseconds reply_timeout);
  void read_replies();  // the reader thread
  bool dispatch_frames();
  void fail(StatusCode code, const std::string& message);
  [[noreturn]] void throw_failure(const Failure& failure) const;
  [[noreturn]] void throw_reply_error(StatusCode status, const std::string& message) const;

  const TcpStoreClientOptions options_;
  const std::string server_name_;
  UniqueFd fd_;
  SessionKeys keys_{};
  net::WakeupFd stop_reader_;
  std::thread reader_;

  std::mutex write_mutex_;      // serialises frames on the socket
  uint64_t next_send_seq_ = 0;  // guarded by write_mutex_

  std::mutex mutex_;
  std::condition_variable replied_;
  std::map<uint64_t, Pending> pending_;  // guarded by mutex_; by request seq
  std::optional<Failure> failure_;       // guarded by mutex_; set once, final

  // Reader thread only.
  Bytes in_;
  uint64_t next_recv_seq_ = 0;
};

}  // namespace kolo::rendezvous

// The public face of the TCP transport: Context and Request over a TcpCore.
#include "transport/tcp/tcp_context.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "common/error.h"
#include "common/logging.h"
#include "rendezvous/prefix_store.h"
#include "transport/striped_context.h"
#include "transport/tcp/bootstrap.h"
#include "transport/tcp/tcp_core.h"

namespace kolo::transport::tcp {

namespace {

class TcpRequest final : public Request {
 public:
  TcpRequest(std::shared_ptr<TcpCore> core, OperationPtr op)
      : core_(std::move(core)), op_(std::move(op)) {}
  ~TcpRequest() override { core_->release(*op_); }
  void wait() override { core_->wait(*op_); }
  bool test() override { return core_->test(*op_); }

 private:
  std::shared_ptr<TcpCore> core_;  // keeps the core alive past its Context
  OperationPtr op_;
};

class TcpContext final : public Context {
 public:
  explicit TcpContext(std::shared_ptr<TcpCore> core) : core_(std::move(core)) {}
  ~TcpContext() override { core_->shutdown(); }

  int rank() const override { return core_->rank(); }
  int size() const override { return core_->size(); }
  std::string peer_name(int rank) const override { return core_->peer_name(rank); }

  std::unique_ptr<Request> isend(int peer, Tag tag, const void* data, size_t bytes) override {
    return std::make_unique<TcpRequest>(core_, core_->post_send(peer, tag, data, bytes));
  }
  std::unique_ptr<Request> irecv(int peer, Tag tag, void* data, size_t bytes) override {
    return std::make_unique<TcpRequest>(core_, core_->post_recv(peer, tag, data, bytes));
  }
  void abort(const std::string& reason) override { core_->abort(reason); }
  void check_health() override { core_->check_health(); }

 private:
  std::shared_ptr<TcpCore> core_;
};

}  // namespace

std::unique_ptr<Context> connect_full_mesh(rendezvous::Store& store, int rank, int size,
                                           const TcpOptions& options) {
  MeshSockets mesh = build_mesh(store, rank, size, options);
  return std::make_unique<TcpContext>(
      std::make_shared<TcpCore>(rank, size, std::move(mesh), options));
}

namespace {

static_assert(TcpOptions::kMaxStreams == static_cast<int>(StripedContext::kMaxStreams));

constexpr const char* kStripingKey = "tcp/striping";

// The threshold only matters with several streams.
std::string striping_text(const TcpOptions& options) {
  if (options.streams == 1) return "KOLO_TCP_STREAMS=1";
  return fmt::format("KOLO_TCP_STREAMS={} KOLO_TCP_STRIPE_BYTES={}", options.streams,
                     options.stripe_threshold);
}

// Rank 0 publishes its striping before its first mesh; by the time another
// rank has connected to it the value is there, so get() needs no wait.
void check_same_striping(rendezvous::Store& store, int rank, const TcpOptions& options) {
  auto theirs = store.get(kStripingKey);
  if (!theirs)
    throw InternalError(fmt::format("rank {}: rank 0 did not publish {}", rank, kStripingKey));
  const std::string ours = striping_text(options);
  if (rendezvous::to_string(*theirs) != ours)
    throw InvalidArgument(
        fmt::format("rank {} has {} but rank 0 has {}: every rank must use the same TCP streams "
                    "and stripe size",
                    rank, ours, rendezvous::to_string(*theirs)));
}

}  // namespace

std::unique_ptr<Context> connect(rendezvous::Store& store, int rank, int size,
                                 const TcpOptions& options) {
  if (options.streams < 1 || options.streams > TcpOptions::kMaxStreams)
    throw InvalidArgument(fmt::format("TCP streams must be in [1, {}], not {}",
                                      TcpOptions::kMaxStreams, options.streams));
  if (size == 1) return connect_full_mesh(store, rank, size, options);
  if (rank == 0) store.set(kStripingKey, rendezvous::to_bytes(striping_text(options)));
  auto first = connect_full_mesh(store, rank, size, options);
  if (rank != 0) check_same_striping(store, rank, options);
  if (options.streams == 1) return first;

  // The store is the caller's; the prefix stores only borrow it.
  std::shared_ptr<rendezvous::Store> borrowed(&store, [](rendezvous::Store*) {});
  std::vector<std::unique_ptr<Context>> streams;
  streams.push_back(std::move(first));
  for (int i = 1; i < options.streams; ++i) {
    rendezvous::PrefixStore scoped("stream" + std::to_string(i), borrowed);
    streams.push_back(connect_full_mesh(scoped, rank, size, options));
  }
  KOLO_LOG_DEBUG("rank {}: {} TCP streams per peer, messages of at least {} bytes striped", rank,
                 options.streams, options.stripe_threshold);
  return std::make_unique<StripedContext>(std::move(streams), options.stripe_threshold);
}

}  // namespace kolo::transport::tcp

// The public face of the TCP transport: Context and Request over a TcpCore.
#include "transport/tcp/tcp_context.h"

#include <memory>

#include "transport/tcp/bootstrap.h"
#include "transport/tcp/tcp_core.h"

namespace kolo::transport::tcp {

namespace {

class TcpRequest final : public Request {
 public:
  TcpRequest(std::shared_ptr<TcpCore> core, OperationPtr op) : core_(std::move(core)), op_(std::move(op)) {}
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

 private:
  std::shared_ptr<TcpCore> core_;
};

}  // namespace

std::unique_ptr<Context> connect_full_mesh(rendezvous::Store& store, int rank, int size,
                                           const TcpOptions& options) {
  MeshSockets mesh = build_mesh(store, rank, size, options);
  return std::make_unique<TcpContext>(std::make_shared<TcpCore>(rank, size, std::move(mesh), options));
}

}  // namespace kolo::transport::tcp

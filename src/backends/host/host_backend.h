// HostBackend: the Backend over Kolo's own transports (TCP now, shared
// memory later) and the algorithms of src/collectives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "collectives/options.h"
#include "transport/context.h"

namespace kolo::backends {

class HostBackend : public Backend {
 public:
  HostBackend(std::shared_ptr<transport::Context> context, collectives::CollectiveOptions options);

  std::string_view name() const override { return "tcp"; }
  int rank() const override { return context_->rank(); }
  int size() const override { return context_->size(); }
  std::string peer_name(int rank) const override { return context_->peer_name(rank); }

  void allreduce(const void* send, void* recv, size_t count, DataType dtype,
                 const Reduction& reduction) override;
  void allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                  DataType dtype) override;
  void broadcast(void* data, size_t count, DataType dtype, int root) override;
  void alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                 const std::vector<size_t>& recv_counts, DataType dtype) override;
  void reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                       DataType dtype, const Reduction& reduction) override;
  void barrier() override;

  std::vector<std::string> gather_bytes(int root, const std::string& mine) override;
  void broadcast_bytes(int root, std::string& data) override;
  void allreduce_and(std::vector<uint64_t>& words) override;

  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, uint32_t group_id) override;
  void abort(const std::string& reason) override { context_->abort(reason); }

 private:
  // Every member calls the same collectives in the same order, so a counter
  // gives each operation the same, fresh tag on every rank.
  transport::Tag next_tag() { return next_tag_++; }

  std::shared_ptr<transport::Context> context_;
  collectives::CollectiveOptions options_;
  transport::Tag next_tag_ = 1;
};

}  // namespace kolo::backends

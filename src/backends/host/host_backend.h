// HostBackend: the Backend over Kolo's own transports (TCP between hosts,
// shared memory within one) and the algorithms of src/collectives.
//
// Choice of algorithm (docs/architecture.md, "Choosing an algorithm"):
// - every rank on one host with shared memory: allreduce, allgather,
//   broadcast, reduce-scatter, alltoall, barrier and the control plane
//   (gather_bytes, broadcast_bytes, allreduce_and) go through the segment
//   (src/collectives/shm);
// - several hosts with the same number of ranks (>= 2) each, all with
//   shared memory: hierarchical allreduce and allgather (unless turned off);
// - otherwise, and for the other operations: the TCP algorithms, chosen by
//   size in src/collectives.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/host/host_topology.h"
#include "collectives/options.h"
#include "transport/context.h"

namespace kolo::backends {

class HostBackend : public Backend {
 public:
  // TCP only (tests); its process sets are TCP only too.
  HostBackend(std::shared_ptr<transport::Context> context, collectives::CollectiveOptions options);
  // Discovers which ranks share a host (a collective over `context`; see
  // host_topology.h) and sets up shared memory where it can. `host_index`
  // is this rank's launcher host (KOLO_CROSS_RANK). Its process sets
  // (subgroup) do the same over their members: a set whose members share
  // one host gets a segment of its own.
  HostBackend(std::shared_ptr<transport::Context> context, collectives::CollectiveOptions options,
              const transport::shm::ShmOptions& shm, int host_index,
              GroupScope scope = GroupScope::kJob);

  std::string_view name() const override { return name_; }
  // Which ranks share a host, and the shared-memory group (for logs, tests).
  const HostTopology& topology() const { return topology_; }
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
  void allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                       const Reduction& reduction) override;
  bool reduces_parts_in_place(DataType dtype, const Reduction& reduction) const override;

  std::vector<std::string> gather_bytes(int root, const std::string& mine) override;
  void broadcast_bytes(int root, std::string& data) override;
  void allreduce_and(std::vector<uint64_t>& words) override;

  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, uint32_t group_id) override;
  void abort(const std::string& reason) override;
  bool has_hierarchical_path() const override;
  void set_hierarchical(bool allreduce, bool allgather) override;

 private:
  // Every member calls the same collectives in the same order, so a counter
  // gives each operation the same, fresh tag on every rank.
  transport::Tag next_tag() { return next_tag_++; }
  std::vector<std::string> gather_bytes_on_host(int root, const std::string& mine);
  // Adasum of the parts: through the segment when every rank is on this
  // host, else over the TCP mesh. `tag` is the operation's.
  void adasum(const std::vector<FusedPart>& parts, DataType dtype, const Reduction& reduction,
              transport::Tag tag);
  // Runs a shared-memory path; its failure also aborts the TCP context, so
  // ranks on other hosts hear the root cause instead of waiting.
  template <typename Body>
  void on_shared_memory(Body&& body);

  std::shared_ptr<transport::Context> context_;
  collectives::CollectiveOptions options_;
  // What the process sets are built with; no value: TCP only.
  std::optional<transport::shm::ShmOptions> shm_options_;
  int host_index_ = 0;
  HostTopology topology_;
  std::string name_ = "tcp";
  transport::Tag next_tag_ = 1;
};

}  // namespace kolo::backends

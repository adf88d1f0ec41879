// HostBackend's shared-memory and hierarchical paths against the serial
// reference: every dtype x op, counts that leave shards empty, uneven or
// spanning many rounds of the (deliberately small) slots, in and out of
// place, scaling, allgatherv with uneven and empty blocks, broadcast from
// every root, and sequences that reuse the slots across operations.
#include <gtest/gtest.h>

#include "unit/backends/shm_backend_fixture.h"

namespace kolo::testing {
namespace {

TEST_P(ShmBackendTest, UsesSharedMemoryWhereAPathCanUseIt) {
  // One host with several ranks, or hosts that all have the same number
  // (at least 2) of ranks (hierarchical). Uneven hosts map no segment: no
  // shared-memory path could use it.
  const auto& hosts = GetParam().hosts;
  std::map<int, long> ranks_on;
  for (int h : hosts) ++ranks_on[h];
  const long first = ranks_on.begin()->second;
  const bool usable =
      first > 1 && std::all_of(ranks_on.begin(), ranks_on.end(),
                               [&](const auto& host) { return host.second == first; });
  for (int r = 0; r < size(); ++r)
    EXPECT_EQ(backends_[r]->name(), usable ? "shm+tcp" : "tcp") << GetParam().name << " rank " << r;
}

TEST_P(ShmBackendTest, EveryTypeAndOp) {
  for (DataType type : kAllTypes)
    for (ReduceOp op : kAllOps) {
      if (!reduce_op_supported(op, type)) continue;
      for (size_t count : {0, 1, 7, 1000})
        for (bool in_place : {false, true}) allreduce(type, op, count, in_place);
    }
}

TEST_P(ShmBackendTest, ManyRoundsAndUnevenShards) {
  const size_t n = size();
  // 4 KiB slots: 5000 float64 take many rounds; counts around n give empty shards.
  for (size_t count : {n - 1, n + 1, 2 * n + 3, size_t{5003}, size_t{99991}}) {
    allreduce(DataType::kFloat32, ReduceOp::kSum, count, false);
    allreduce(DataType::kFloat64, ReduceOp::kMax, count, true);
  }
  allreduce(DataType::kFloat16, ReduceOp::kSum, (size_t{1} << 18) + 3, true);
}

TEST_P(ShmBackendTest, MessagesLargeEnoughForStreamingStores) {
  // From ShmOptions::streaming_bytes on, outputs are written with
  // non-temporal stores (heads and tails of odd length around them); the
  // threshold is lowered so that moderate counts take that path, and the
  // default one (16 MB) is passed too.
  transport::shm::ShmOptions shm = small_slot_options();
  shm.streaming_bytes = 64 * 1024;
  backends_ = make_backends(GetParam().hosts, shm);
  allreduce(DataType::kFloat32, ReduceOp::kSum, 16384, false);  // exactly at the threshold
  allreduce(DataType::kFloat32, ReduceOp::kSum, 100003, false);
  allreduce(DataType::kInt64, ReduceOp::kMax, 50001, true);
  allreduce(DataType::kFloat16, ReduceOp::kSum, 70001, false);
  const auto& hosts = GetParam().hosts;
  if (size() <= 3 && std::count(hosts.begin(), hosts.end(), hosts[0]) ==
                         size()) {  // default threshold, small hosts
    backends_ = make_backends(GetParam().hosts);
    allreduce(DataType::kFloat32, ReduceOp::kSum, (size_t{1} << 22) + 5, false);
  }
}

TEST_P(ShmBackendTest, ScalingAndAverage) {
  for (DataType type :
       {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kFloat64}) {
    for (size_t count : {size_t{13}, size_t{70001}}) {
      allreduce(type, ReduceOp::kAverage, count, false);
      allreduce(type, ReduceOp::kSum, count, true, 2.0, 0.25);
      allreduce(type, ReduceOp::kAverage, count, false, 0.5, 3.0);
    }
  }
}

TEST_P(ShmBackendTest, AllgathervUnevenAndEmptyBlocks) {
  allgatherv({0, 1, 3000});
}

TEST_P(ShmBackendTest, AllgathervInPlace) {
  allgatherv({1, 3000}, Source::kAtItsPlace);
  allgatherv({1, 3000}, Source::kAtRecvStart);
}

TEST_P(ShmBackendTest, BroadcastFromEveryRoot) {
  broadcast({0, 1, 10007});
}

TEST_P(ShmBackendTest, MixedSequenceReusesSlotsSafely) {
  // Alternating paths and sizes, with barriers between, on the same slots.
  for (int round = 0; round < 5; ++round) {
    allreduce(DataType::kInt32, ReduceOp::kSum, 3, false);
    allreduce(DataType::kInt64, ReduceOp::kSum, 9000, true);
    ASSERT_EQ(run_backends(backends_, [](backends::Backend& b) { b.barrier(); }), "");
    allreduce(DataType::kFloat32, ReduceOp::kMin, 1500, false);
    alltoallv([round](int i, int j) { return static_cast<size_t>((i + j + round) % 3) * 700; });
  }
}

TEST_P(ShmBackendTest, FusedPartsInPlaceOrThroughTheDefault) {
  // Parts of every shape, one of them missing on rank 0 (a joined rank:
  // zeros in, nothing out); in place on one host, fused by the default
  // elsewhere. Either way: the reference of the concatenation.
  const int n = size();
  const std::vector<size_t> counts{0, 1, 1000, 7, 3001};
  size_t total = 0;
  for (size_t c : counts) total += c;
  for (DataType type : {DataType::kFloat32, DataType::kInt32})
    for (auto [op, prescale, postscale] :
         {std::tuple{ReduceOp::kSum, 1.0, 1.0}, std::tuple{ReduceOp::kAverage, 2.0, 0.5},
          std::tuple{ReduceOp::kMax, 1.0, 1.0}}) {
      std::vector<Bytes> inputs;
      for (int r = 0; r < n; ++r) {
        inputs.push_back(make_input(type, op, total, r, ++salt_));
        if (r == 0) {  // part 3 (7 elements, from element 1001) missing on rank 0
          Bytes zero(dtype_size(type), 0);
          for (size_t i = 1001; i < 1008; ++i)
            std::copy(zero.begin(), zero.end(),
                      inputs[0].begin() + static_cast<long>(i * zero.size()));
        }
      }
      const Bytes expected = reference_reduce(type, op, inputs, prescale, postscale);
      std::vector<Bytes> results(n);
      ASSERT_EQ(run_backends(backends_,
                             [&](backends::Backend& b) {
                               const int r = b.rank();
                               const size_t e = dtype_size(type);
                               results[r] = Bytes(total * e, 0xcd);
                               std::vector<backends::FusedPart> parts;
                               size_t at = 0;
                               for (size_t i = 0; i < counts.size(); ++i) {
                                 const bool missing = r == 0 && i == 3;
                                 parts.push_back({missing ? nullptr : inputs[r].data() + at * e,
                                                  missing ? nullptr : results[r].data() + at * e,
                                                  counts[i]});
                                 at += counts[i];
                               }
                               b.allreduce_parts(parts, type, {op, prescale, postscale});
                             }),
                "");
      for (int r = 0; r < n; ++r) {
        Bytes want = expected;
        if (r == 0)  // rank 0 asked for no output of part 3: its bytes stay as they were
          std::fill(want.begin() + static_cast<long>(1001 * dtype_size(type)),
                    want.begin() + static_cast<long>(1008 * dtype_size(type)), 0xcd);
        EXPECT_TRUE(results[r] == want)
            << dtype_name(type) << " " << reduce_op_name(op) << " rank " << r;
      }
    }
}

TEST_P(ShmBackendTest, ManySmallPartsAreReadWhereTheyLie) {
  // A fused step of many small tensors: most chunks of the (small) slots
  // span several parts, which each member reads in place, piece by piece.
  // In place (output = input) and into separate outputs.
  const int n = size();
  std::vector<size_t> counts;
  size_t total = 0;
  for (size_t i = 0; i < 200; ++i) {
    counts.push_back(1 + (i * 7) % 37);
    total += counts.back();
  }
  for (DataType type : {DataType::kFloat32, DataType::kFloat64, DataType::kInt32})
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kAverage})
      for (bool in_place : {false, true}) {
        std::vector<Bytes> inputs;
        for (int r = 0; r < n; ++r) inputs.push_back(make_input(type, op, total, r, ++salt_));
        const Bytes expected = reference_reduce(type, op, inputs, 1.0, 1.0);
        std::vector<Bytes> results(n);
        ASSERT_EQ(run_backends(backends_,
                               [&](backends::Backend& b) {
                                 const int r = b.rank();
                                 const size_t e = dtype_size(type);
                                 results[r] = in_place ? inputs[r] : Bytes(total * e, 0xcd);
                                 auto* in = in_place ? results[r].data() : inputs[r].data();
                                 std::vector<backends::FusedPart> parts;
                                 size_t at = 0;
                                 for (size_t c : counts) {
                                   parts.push_back({in + at * e, results[r].data() + at * e, c});
                                   at += c;
                                 }
                                 b.allreduce_parts(parts, type, {op, 1.0, 1.0});
                               }),
                  "");
        for (int r = 0; r < n; ++r)
          EXPECT_TRUE(results[r] == expected) << dtype_name(type) << " " << reduce_op_name(op)
                                              << (in_place ? " in place" : "") << " rank " << r;
      }
}

TEST_P(ShmBackendTest, ReduceScatterEvenAndUnevenShards) {
  // Even shards (the reduce_scatter layout: shared memory on one host, many
  // rounds of the small slots at 5003 and 99991) and uneven ones (through
  // an allreduce); each rank's recv holds just its shard.
  const int n = size();
  std::vector<std::vector<size_t>> layouts;
  for (size_t total :
       {size_t{1}, static_cast<size_t>(n) - 1, size_t{7}, size_t{5003}, size_t{99991}}) {
    std::vector<size_t> even;
    for (int r = 0; r < n; ++r) even.push_back(collectives::reduce_scatter_count(total, n, r));
    layouts.push_back(even);
  }
  std::vector<size_t> uneven;
  for (int r = 0; r < n; ++r) uneven.push_back(r == 1 ? 0 : 300 + static_cast<size_t>(r) * 7);
  layouts.push_back(uneven);
  for (const auto& counts : layouts)
    for (DataType type :
         {DataType::kFloat32, DataType::kInt32, DataType::kBFloat16, DataType::kFloat64})
      for (auto [op, prescale, postscale] :
           {std::tuple{ReduceOp::kSum, 1.0, 1.0}, std::tuple{ReduceOp::kAverage, 2.0, 0.5},
            std::tuple{ReduceOp::kMax, 1.0, 1.0}}) {
        size_t total = 0;
        for (size_t c : counts) total += c;
        const size_t e = dtype_size(type);
        std::vector<Bytes> inputs;
        for (int r = 0; r < n; ++r) inputs.push_back(make_input(type, op, total, r, ++salt_));
        const Bytes expected = reference_reduce(type, op, inputs, prescale, postscale);
        std::vector<Bytes> results(n);
        ASSERT_EQ(run_backends(backends_,
                               [&](backends::Backend& b) {
                                 const int r = b.rank();
                                 results[r] = Bytes(counts[r] * e + 3, 0xcd);  // 3 guard bytes
                                 b.reduce_scatterv(inputs[r].data(), results[r].data(), counts,
                                                   type, {op, prescale, postscale});
                               }),
                  "");
        size_t offset = 0;
        for (int r = 0; r < n; ++r) {
          Bytes want(expected.begin() + static_cast<long>(offset * e),
                     expected.begin() + static_cast<long>((offset + counts[r]) * e));
          want.insert(want.end(), 3, 0xcd);
          EXPECT_TRUE(results[r] == want) << dtype_name(type) << " " << reduce_op_name(op)
                                          << " total " << total << " rank " << r;
          offset += counts[r];
        }
      }
}

TEST_P(ShmBackendTest, AlltoallvEqualUnevenEmptyAndInPlace) {
  alltoallv_cases();
}

TEST_P(ShmBackendTest, AlltoallvCountsThatDisagreeFailEveryRank) {
  // Rank 1 expects one element fewer from rank 0 than rank 0 sends. On one
  // host every rank finds it in the headers and names both ranks; over TCP
  // the transport rejects the message on rank 1.
  const int n = size();
  std::vector<std::string> errors(n);
  const std::string all = run_backends(backends_, [&](backends::Backend& b) {
    const int r = b.rank();
    std::vector<size_t> send_counts(n, 4), recv_counts(n, 4);
    if (r == 1) recv_counts[0] = 3;
    std::vector<int32_t> send(4 * n, r), recv(4 * n, -1);
    try {
      b.alltoallv(send.data(), send_counts, recv.data(), recv_counts, DataType::kInt32);
    } catch (const std::exception& e) {
      errors[r] = e.what();
      throw;
    }
  });
  EXPECT_NE(all, "");
  EXPECT_NE(errors[1], "") << all;
  if (backends_[0]->topology().shm && backends_[0]->topology().hosts.size() == 1) {
    for (int r = 0; r < n; ++r)
      for (const char* part :
           {"alltoallv: rank 0 (", ") sends 16 bytes to rank 1 (", "), which expects 12"})
        EXPECT_NE(errors[r].find(part), std::string::npos) << "rank " << r << ": " << errors[r];
  }
}

TEST_P(ShmBackendTest, AlltoallReadsDirectlyWhereTheReadsWorkUnlessTurnedOff) {
  // KOLO_SHM_SINGLE_COPY=auto: allgather and broadcast read directly only
  // where the host's ranks do not outnumber its cores, alltoall wherever
  // the reads work (here: always, the ranks are threads). 0: never.
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (auto mode : {transport::shm::SingleCopy::kAuto, transport::shm::SingleCopy::kOff}) {
    transport::shm::ShmOptions shm = small_slot_options();
    shm.single_copy = mode;
    shm.single_copy_bytes = 1;
    backends_ = make_backends(GetParam().hosts, shm);
    for (const auto& backend : backends_) {
      const auto& group = backend->topology().shm;
      if (!group) continue;
      const bool on = mode == transport::shm::SingleCopy::kAuto;
      EXPECT_EQ(group->direct_reads(), on) << "rank " << backend->rank();
      EXPECT_EQ(group->single_copy(), on && group->size() <= cores) << "rank " << backend->rank();
    }
    alltoallv_cases();
  }
}

TEST_P(ShmBackendTest, ControlPlaneOnEveryPath) {
  // The engine's negotiation: gather_bytes and broadcast_bytes from every
  // root (empty, short, and longer than a 4 KiB slot), and allreduce_and,
  // interleaved with data collectives on the same slots.
  const int n = size();
  auto text = [](int r, int root) {
    const size_t length = r % 3 == 1 ? 0 : 5 + static_cast<size_t>(r) * 1500;
    std::string s(length, '\0');
    for (size_t i = 0; i < length; ++i) s[i] = static_cast<char>('a' + (i * 7 + r * 3 + root) % 26);
    return s;
  };
  for (int root = 0; root < n; ++root) {
    std::vector<std::vector<std::string>> gathered(n);
    std::vector<std::string> broadcasted(n);
    std::vector<std::vector<uint64_t>> anded(n);
    ASSERT_EQ(run_backends(backends_,
                           [&](backends::Backend& b) {
                             const int r = b.rank();
                             gathered[r] = b.gather_bytes(root, text(r, root));
                             broadcasted[r] = r == root ? text(root + 2, root) : "stale";
                             b.broadcast_bytes(root, broadcasted[r]);
                             // Bit r of word 0 is clear on rank r only; word 1
                             // keeps the bits every rank sets; word 2 is zero.
                             anded[r] = {~(uint64_t{1} << r),
                                         0xf0f0'0000'0000'00ffull | (uint64_t{1} << (8 + r)), 0};
                             b.allreduce_and(anded[r]);
                             b.barrier();
                           }),
              "");
    uint64_t all_but_members = ~uint64_t{0};
    for (int r = 0; r < n; ++r) all_but_members &= ~(uint64_t{1} << r);
    for (int r = 0; r < n; ++r) {
      if (r == root) {
        ASSERT_EQ(gathered[r].size(), static_cast<size_t>(n));
        for (int q = 0; q < n; ++q)
          EXPECT_EQ(gathered[r][q], text(q, root)) << "root " << root << " from " << q;
      } else {
        EXPECT_TRUE(gathered[r].empty()) << "rank " << r << " is not the root " << root;
      }
      EXPECT_EQ(broadcasted[r], text(root + 2, root)) << "root " << root << " rank " << r;
      EXPECT_EQ(anded[r], (std::vector<uint64_t>{all_but_members, 0xf0f0'0000'0000'00ffull, 0}))
          << "root " << root << " rank " << r;
    }
    allreduce(DataType::kInt64, ReduceOp::kSum, 9000, true);
  }
}

TEST_P(ShmBackendTest, HierarchicalBandwidthPathAndItsOffSwitch) {
  // A ring threshold of 0 sends every size through the reduce-scatter /
  // cross-host / allgather path; kOff through the flat TCP ring.
  for (auto mode : {collectives::HierarchicalMode::kAuto, collectives::HierarchicalMode::kOff}) {
    collectives::CollectiveOptions options;
    options.allreduce_ring_threshold = 0;
    options.hierarchical_allreduce = mode;
    options.hierarchical_allgather = mode;
    backends_ = make_backends(GetParam().hosts, small_slot_options(), options);
    for (size_t count : {size_t{1}, size_t{5}, size_t{4099}})
      allreduce(DataType::kInt32, ReduceOp::kSum, count, count % 2 == 0);
    allreduce(DataType::kFloat32, ReduceOp::kAverage, 20011, false);
  }
}

TEST_P(ShmBackendTest, ProcessSetsTakeSharedMemoryWhereTheyLieOnOneHost) {
  // Sets of the layout: every rank, the ranks of the first host, one rank
  // per host, and every other rank. A set whose members share one host runs on a segment
  // of its own; one across hosts stays on TCP. Every collective is checked
  // on the set's backends (the fixture's helpers run on them), then the
  // parent carries on with its own segment.
  const auto& hosts = GetParam().hosts;
  const int n = size();
  std::vector<int> everyone, first_host, one_per_host, every_other;
  for (int r = 0; r < n; ++r) {
    everyone.push_back(r);
    if (hosts[r] == hosts[0]) first_host.push_back(r);
    if (std::find(hosts.begin(), hosts.begin() + r, hosts[r]) == hosts.begin() + r)
      one_per_host.push_back(r);
    if (r % 2 == 1) every_other.push_back(r);
  }
  uint32_t group_id = 1;
  for (const auto& members : {everyone, first_host, one_per_host, every_other}) {
    if (members.size() < 2) continue;
    const bool one_host = std::all_of(members.begin(), members.end(),
                                      [&](int r) { return hosts[r] == hosts[members[0]]; });
    const std::string what = fmt::format("set {} of {}", fmt::join(members, ","), GetParam().name);
    Backends set(members.size());
    ASSERT_EQ(run_backends(backends_,
                           [&](backends::Backend& b) {
                             const auto at = std::find(members.begin(), members.end(), b.rank());
                             if (at == members.end()) return;
                             auto sub = b.subgroup(members, group_id);
                             set[static_cast<size_t>(at - members.begin())].reset(
                                 dynamic_cast<backends::HostBackend*>(sub.release()));
                           }),
              "")
        << what;
    for (const auto& backend : set) {
      ASSERT_NE(backend, nullptr) << what;
      EXPECT_EQ(backend->name(), one_host ? "shm+tcp" : "tcp") << what;
      EXPECT_EQ(backend->topology().cross, nullptr) << what << ": no hierarchical path for a set";
    }
    Backends parent = std::exchange(backends_, std::move(set));
    allreduce(DataType::kFloat32, ReduceOp::kSum, 99991, false);
    allreduce(DataType::kInt64, ReduceOp::kMax, 5003, true);
    allreduce(DataType::kFloat32, ReduceOp::kAverage, 7, false, 0.5, 3.0);
    allgatherv({1, 3000});
    broadcast({1, 10007});
    alltoallv_cases();
    backends_ = std::move(parent);  // the set's backends (and segment) go
    allreduce(DataType::kFloat32, ReduceOp::kSum, 5003, false);
    ++group_id;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ShmBackendTest, ::testing::ValuesIn(kLayouts),
                         [](const auto& layout) { return layout.param.name; });

}  // namespace
}  // namespace kolo::testing

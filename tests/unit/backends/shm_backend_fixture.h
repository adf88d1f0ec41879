// ShmBackendTest: HostBackend over every layout of ranks on "hosts" (ranks as
// threads; a host is a launcher host index), with helpers that run each
// collective on every rank and check it against the serial reference.
// Shared by shm_backend_test.cc and shm_direct_reads_test.cc.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "collectives/collectives.h"
#include "unit/backends/topology_fixture.h"
#include "unit/collectives/reference.h"

namespace kolo::testing {

using Backends = std::vector<std::unique_ptr<backends::HostBackend>>;

inline const Layout kLayouts[] = {
    {{0, 0}, "one_host_2"},
    {{0, 0, 0}, "one_host_3"},
    {{0, 0, 0, 0, 0}, "one_host_5"},
    {{0, 0, 0, 0, 0, 0, 0, 0}, "one_host_8"},
    {{0, 0, 1, 1}, "two_hosts_x2"},
    {{0, 0, 0, 1, 1, 1}, "two_hosts_x3"},
    {{0, 0, 1, 1, 2, 2}, "three_hosts_x2"},
    {{0, 1, 0, 1}, "two_hosts_interleaved"},
    {{0, 0, 1}, "uneven_hosts_tcp"},
};

class ShmBackendTest : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override { backends_ = make_backends(GetParam().hosts); }
  // The ranks under test: the layout's, or a process set's (see below).
  int size() const { return static_cast<int>(backends_.size()); }

  void allreduce(DataType type, ReduceOp op, size_t count, bool in_place, double prescale = 1.0,
                 double postscale = 1.0) {
    const std::string what = fmt::format(
        "{} {} count={} {} prescale={} postscale={}", dtype_name(type), reduce_op_name(op), count,
        in_place ? "in place" : "out of place", prescale, postscale);
    const int n = size();
    const uint64_t salt = ++salt_;
    std::vector<Bytes> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(make_input(type, op, count, r, salt));
    const Bytes expected = reference_reduce(type, op, inputs, prescale, postscale);
    std::vector<Bytes> results(n);
    std::vector<std::string> problems(n);
    ASSERT_EQ(run_backends(backends_,
                           [&](backends::Backend& b) {
                             const int r = b.rank();
                             Bytes send = inputs[r];
                             results[r] = in_place ? send : Bytes(send.size(), 0xcd);
                             b.allreduce(in_place ? results[r].data() : send.data(),
                                         results[r].data(), count, type, {op, prescale, postscale});
                             problems[r] = compare(type, expected, results[r]);
                             if (!in_place && send != inputs[r])
                               problems[r] += " (send buffer modified)";
                           }),
              "")
        << what;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(problems[r], "") << what << " on rank " << r;
      EXPECT_TRUE(results[r] == results[0]) << what << ": rank " << r << " differs from rank 0";
    }
  }

  // Where each rank's block is on entry: its own buffer, already at its
  // place in the output, or at the output's start (send == recv: the
  // backend moves it to its place, over what then no longer is the input).
  enum class Source { kOwnBuffer, kAtItsPlace, kAtRecvStart };

  // Blocks of base + 17 r floats, none for every third rank.
  void allgatherv(std::initializer_list<size_t> bases, Source source = Source::kOwnBuffer) {
    const int n = size();
    for (size_t base : bases) {
      std::vector<size_t> counts(n);
      for (int r = 0; r < n; ++r) counts[r] = r % 3 == 1 ? 0 : base + static_cast<size_t>(r) * 17;
      size_t total = 0;
      for (size_t c : counts) total += c;
      std::vector<Bytes> blocks;
      Bytes expected;
      for (int r = 0; r < n; ++r) {
        blocks.push_back(make_bytes(counts[r] * 4, r, base));
        expected.insert(expected.end(), blocks[r].begin(), blocks[r].end());
      }
      std::vector<Bytes> results(n);
      ASSERT_EQ(run_backends(backends_,
                             [&](backends::Backend& b) {
                               Bytes& out = results[b.rank()];
                               out = Bytes(total * 4, 0xcd);
                               size_t own = 0;
                               for (int q = 0; q < b.rank(); ++q) own += counts[q] * 4;
                               const Bytes& block = blocks[b.rank()];
                               const void* send = block.data();
                               if (source == Source::kAtItsPlace) {
                                 std::copy(block.begin(), block.end(),
                                           out.begin() + static_cast<long>(own));
                                 send = out.data() + own;
                               } else if (source == Source::kAtRecvStart) {
                                 std::copy(block.begin(), block.end(), out.begin());
                                 send = out.data();
                               }
                               b.allgatherv(send, out.data(), counts, DataType::kFloat32);
                             }),
                "");
      for (int r = 0; r < n; ++r)
        EXPECT_TRUE(results[r] == expected) << "base " << base << " rank " << r;
    }
  }

  // From every root.
  void broadcast(std::initializer_list<size_t> sizes) {
    const int n = size();
    for (int root = 0; root < n; ++root)
      for (size_t bytes : sizes) {
        const Bytes data = make_bytes(bytes, root, 7);
        std::vector<Bytes> results(n);
        ASSERT_EQ(run_backends(backends_,
                               [&](backends::Backend& b) {
                                 results[b.rank()] = b.rank() == root ? data : Bytes(bytes, 0);
                                 b.broadcast(results[b.rank()].data(), bytes, DataType::kUInt8,
                                             root);
                               }),
                  "");
        for (int r = 0; r < n; ++r)
          EXPECT_TRUE(results[r] == data) << "root " << root << " bytes " << bytes;
      }
  }

  // Rank i sends counts(i, j) int32s to rank j; each rank's recv ends in
  // guard bytes that must stay untouched. In place: send is recv (needs
  // counts that are the same for every pair).
  void alltoallv(const std::function<size_t(int, int)>& counts, bool in_place = false) {
    const int n = size();
    const uint64_t salt = ++salt_;
    auto block = [&](int i, int j) { return make_bytes(counts(i, j) * 4, i * 64 + j, salt); };
    std::vector<Bytes> expected(n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        const Bytes b = block(i, j);
        expected[j].insert(expected[j].end(), b.begin(), b.end());
      }
      expected[j].insert(expected[j].end(), 5, 0xcd);
    }
    std::vector<Bytes> results(n);
    ASSERT_EQ(run_backends(backends_,
                           [&](backends::Backend& b) {
                             const int r = b.rank();
                             std::vector<size_t> send_counts, recv_counts;
                             Bytes send;
                             for (int j = 0; j < n; ++j) {
                               send_counts.push_back(counts(r, j));
                               recv_counts.push_back(counts(j, r));
                               const Bytes bj = block(r, j);
                               send.insert(send.end(), bj.begin(), bj.end());
                             }
                             Bytes& out = results[r];
                             out = Bytes(expected[r].size(), 0xcd);
                             if (in_place) std::copy(send.begin(), send.end(), out.begin());
                             b.alltoallv(in_place ? out.data() : send.data(), send_counts,
                                         out.data(), recv_counts, DataType::kInt32);
                           }),
              "")
        << "salt " << salt;
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(results[r] == expected[r]) << "rank " << r << " salt " << salt;
  }

  // Equal, uneven with empty blocks, many rounds of the 4 KiB slots, and
  // one long block between two ranks only (every rank still takes as many
  // rounds as that pair needs).
  void alltoallv_cases() {
    const int n = size();
    for (size_t c : {size_t{0}, size_t{1}, size_t{1000}}) {
      alltoallv([c](int, int) { return c; });
      alltoallv([c](int, int) { return c; }, true);
    }
    alltoallv([](int i, int j) { return static_cast<size_t>((i * 7 + j * 3) % 4) * 333; });
    alltoallv([](int i, int j) { return static_cast<size_t>(i == j ? 5 : 0); });
    alltoallv([n](int i, int j) { return size_t{i == 0 && j == n - 1 ? 5000u : 3u}; });
  }

  Backends backends_;
  uint64_t salt_ = 0;
};

}  // namespace kolo::testing

// The shared-memory reduce rounds' layout: PartList (fused parts as one
// array, each part at an aligned start with a gap before it) and ShardLayout
// (which member reduces which elements in which round).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/shm/part_list.h"
#include "collectives/shm/shm_internal.h"

namespace kolo::collectives::shm::internal {
namespace {

using Floats = std::vector<float>;

// Parts over `inputs` and `outputs` (a null input or output where the
// vector is empty).
std::vector<FusedPart> parts_of(std::vector<Floats>& inputs, std::vector<Floats>& outputs) {
  std::vector<FusedPart> parts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    parts.push_back({inputs[i].empty() ? nullptr : inputs[i].data(),
                     outputs[i].empty() ? nullptr : outputs[i].data(),
                     std::max(inputs[i].size(), outputs[i].size())});
  }
  return parts;
}

Floats read_all(const PartList& list) {
  Floats all(list.total(), -1.0f);
  list.read(0, list.total(), reinterpret_cast<std::byte*>(all.data()));
  return all;
}

TEST(PartList, PackedPartsAreOneArray) {
  std::vector<Floats> in{{1, 2, 3}, {4}, {}, {5, 6}}, out(4);
  auto parts = parts_of(in, out);
  parts[2].count = 0;
  const PartList list(parts, sizeof(float));
  EXPECT_EQ(list.total(), 6u);
  EXPECT_EQ(read_all(list), (Floats{1, 2, 3, 4, 5, 6}));
}

TEST(PartList, AlignedPartsStartAtMultiplesWithZeroGapsBetween) {
  // 3, 16, none, 5 and 2 elements with 4-element alignment: starts 0, 4,
  // 20 (the empty part takes no room), 20, 28.
  std::vector<Floats> in{Floats(3, 1), Floats(16, 2), {}, Floats(5, 3), Floats(2, 4)};
  std::vector<Floats> out{Floats(3), Floats(16), {}, Floats(5), Floats(2)};
  const auto parts = parts_of(in, out);
  const PartList list(parts, sizeof(float), 4);
  ASSERT_EQ(list.total(), 30u);
  Floats want(30, 0.0f);  // the gaps: 3, 25-27
  std::fill(want.begin(), want.begin() + 3, 1.0f);
  std::fill(want.begin() + 4, want.begin() + 20, 2.0f);
  std::fill(want.begin() + 20, want.begin() + 25, 3.0f);
  std::fill(want.begin() + 28, want.end(), 4.0f);
  EXPECT_EQ(read_all(list), want);

  // A read from inside a gap through two parts.
  Floats some(8, -1.0f);
  list.read(24, 6, reinterpret_cast<std::byte*>(some.data()));
  EXPECT_EQ(some, (Floats{3, 0, 0, 0, 4, 4, -1, -1}));

  // Writes land in the parts; what lies over a gap goes nowhere.
  Floats src(30);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(100 + i);
  list.write(0, 30, reinterpret_cast<const std::byte*>(src.data()),
             [](void* d, const void* s, size_t bytes) { std::memcpy(d, s, bytes); });
  EXPECT_EQ(out[0], (Floats{100, 101, 102}));
  EXPECT_EQ(out[1].front(), 104.0f);
  EXPECT_EQ(out[1].back(), 119.0f);
  EXPECT_EQ(out[3], (Floats{120, 121, 122, 123, 124}));
  EXPECT_EQ(out[4], (Floats{128, 129}));
}

TEST(PartList, GapsHoldNoInputButDoNotCountAsMissingOne) {
  std::vector<Floats> in{Floats(3, 1), Floats(5, 2)}, out{Floats(3), Floats(5)};
  auto parts = parts_of(in, out);
  const PartList aligned(parts, sizeof(float), 4);
  EXPECT_TRUE(aligned.inputs_present(0, aligned.total()));
  // The pieces visited: the parts only, each at its place in the array.
  std::vector<std::pair<size_t, size_t>> pieces;  // (elements, done before)
  aligned.visit_inputs(2, 6, [&](const std::byte* at, size_t n, size_t done) {
    EXPECT_EQ(*reinterpret_cast<const float*>(at), done == 0 ? 1.0f : 2.0f);
    pieces.emplace_back(n, done);
  });
  EXPECT_EQ(pieces, (std::vector<std::pair<size_t, size_t>>{{1, 0}, {4, 2}}));

  parts[1].input = nullptr;  // a joined rank's part: zeros in
  const PartList missing(parts, sizeof(float), 4);
  EXPECT_TRUE(missing.inputs_present(0, 4));
  EXPECT_FALSE(missing.inputs_present(0, missing.total()));
}

TEST(ShardLayout, UnalignedIsReduceScatterSplit) {
  for (size_t total : {0u, 1u, 7u, 1000u, 99991u})
    for (int n : {1, 2, 3, 5, 8}) {
      const ShardLayout layout(total, n, DataType::kFloat32, 4096);
      for (int j = 0; j < n; ++j) {
        EXPECT_EQ(layout.offset[j], reduce_scatter_offset(total, n, j));
        EXPECT_EQ(layout.count[j], reduce_scatter_count(total, n, j));
      }
    }
}

TEST(ShardLayout, AlignedShardsAndChunksStartAtMultiplesAndCoverTheMessageOnce) {
  const size_t align = 16;
  for (size_t total : {0u, 1u, 15u, 16u, 17u, 100u, 1000u, 99991u})
    for (int n : {1, 2, 3, 5, 8})
      for (size_t slot : {64u, 1000u, 4096u, 1u << 20}) {
        const ShardLayout layout(total, n, DataType::kFloat32, slot, align);
        SCOPED_TRACE(testing::Message() << "total " << total << " n " << n << " slot " << slot);
        if (layout.per_round > align) {
          EXPECT_EQ(layout.per_round % align, 0u);
        }
        EXPECT_LE(layout.per_round * static_cast<size_t>(n) * sizeof(float),
                  std::max(slot, static_cast<size_t>(n) * sizeof(float)));
        std::vector<int> seen(total, 0);
        for (int j = 0; j < n; ++j) {
          EXPECT_LE(layout.count[j], layout.count[0]);  // rounds are counted from shard 0
          for (size_t k = 0; k < layout.rounds; ++k) {
            const size_t begin = layout.chunk_begin(j, k);
            const size_t count = layout.chunk_count(j, k);
            // (A slot too small for one aligned chunk per member keeps its
            // smaller chunks.)
            if (count > 0 && layout.per_round % align == 0) {
              EXPECT_EQ(begin % align, 0u) << "shard " << j << " round " << k;
            }
            for (size_t i = begin; i < begin + count; ++i) ++seen[i];
          }
        }
        for (size_t i = 0; i < total; ++i) ASSERT_EQ(seen[i], 1) << "element " << i;
      }
}

}  // namespace
}  // namespace kolo::collectives::shm::internal

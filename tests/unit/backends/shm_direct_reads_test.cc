// ShmBackendTest again with direct reads of the peers' buffers forced on
// from the first byte (KOLO_SHM_SINGLE_COPY=1, single_copy_bytes 1).
#include <gtest/gtest.h>

#include "unit/backends/shm_backend_fixture.h"

namespace kolo::testing {
namespace {

// The same with direct reads of the peers' buffers (process_vm_readv; the
// ranks are threads here, so the reads stay in one process, through the
// same system call) from the first byte on, whatever the host's cores.
class ShmDirectReadsTest : public ShmBackendTest {
 protected:
  void SetUp() override {
    transport::shm::ShmOptions shm = small_slot_options();
    shm.single_copy = transport::shm::SingleCopy::kOn;
    shm.single_copy_bytes = 1;
    backends_ = make_backends(GetParam().hosts, shm);
  }
};

TEST_P(ShmDirectReadsTest, EveryGroupReadsDirectly) {
  for (const auto& backend : backends_) {
    const auto& group = backend->topology().shm;
    if (group) {
      EXPECT_TRUE(group->single_copy()) << GetParam().name << " rank " << backend->rank();
    }
  }
}

TEST_P(ShmDirectReadsTest, AllgathervUnevenAndEmptyBlocks) {
  allgatherv({0, 1, 3000});
}

TEST_P(ShmDirectReadsTest, AllgathervInPlace) {
  allgatherv({1, 3000}, Source::kAtItsPlace);
  allgatherv({1, 3000}, Source::kAtRecvStart);
}

// Up to one slot (4 KiB here) broadcasts read the root's buffer; 10007 bytes
// take the pipelined slots.
TEST_P(ShmDirectReadsTest, BroadcastFromEveryRoot) {
  broadcast({0, 1, 4096, 10007});
}

// Every non-empty block is read from its sender's buffer.
TEST_P(ShmDirectReadsTest, AlltoallvEqualUnevenEmptyAndInPlace) {
  alltoallv_cases();
}

// Blocks from 2000 bytes on are read directly, shorter ones take the slots,
// in the same exchange.
TEST_P(ShmDirectReadsTest, AlltoallvMixesDirectAndSlotBlocks) {
  transport::shm::ShmOptions shm = small_slot_options();
  shm.single_copy = transport::shm::SingleCopy::kOn;
  shm.single_copy_bytes = 2000;
  backends_ = make_backends(GetParam().hosts, shm);
  alltoallv([](int i, int j) { return static_cast<size_t>((i + j) % 3) * 400; });
  alltoallv([](int i, int j) { return size_t{(i + j) % 2 == 0 ? 600u : 7u}; });
}

TEST_P(ShmDirectReadsTest, MixedWithSlotPaths) {
  for (int round = 0; round < 3; ++round) {
    allgatherv({5});
    allreduce(DataType::kInt32, ReduceOp::kSum, 3, false);
    broadcast({1000});
    allreduce(DataType::kInt64, ReduceOp::kSum, 9000, true);
    alltoallv([](int i, int j) { return static_cast<size_t>(i + j); });
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ShmDirectReadsTest, ::testing::ValuesIn(kLayouts),
                         [](const auto& layout) { return layout.param.name; });

}  // namespace
}  // namespace kolo::testing

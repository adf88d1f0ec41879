// The public API's view of the engine's output cache (core/output_pool.h):
// Engine::allocate_output and the outputs the engine allocates itself come
// back for reuse once released, never while held, and stay valid after
// shutdown.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kolo/engine.h"
#include "public_ranks.h"

namespace kolo {
namespace {

using testing::run_public;
using namespace std::chrono_literals;

TEST(PublicOutputCache, AllocatedOutputIsReusedOnlyOnceReleased) {
  run_public(1, [](Engine& engine, int) {
    std::shared_ptr<void> first = engine.allocate_output(1 << 20);
    ASSERT_NE(first.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first.get()) % 64, 0u);
    std::memset(first.get(), 1, 1 << 20);
    std::shared_ptr<void> second = engine.allocate_output(1 << 20);
    EXPECT_NE(second.get(), first.get()) << "a held output was handed out again";
    void* address = first.get();
    EXPECT_EQ(engine.cached_output_bytes(), 0u);
    first.reset();
    EXPECT_EQ(engine.cached_output_bytes(), size_t{1} << 20);
    std::shared_ptr<void> third = engine.allocate_output(1 << 20);
    EXPECT_EQ(third.get(), address);
    EXPECT_EQ(engine.allocate_output(0).get(), nullptr);
  });
}

TEST(PublicOutputCache, EngineAllocatedOutputsComeFromTheCache) {
  run_public(2, [](Engine& engine, int rank) {
    std::vector<float> input(4096, static_cast<float>(rank + 1));
    Tensor t{input.data(), DataType::kFloat32, {4096}};
    Handle first = engine.allgather(t, {.name = "gather"});
    ASSERT_TRUE(first.wait(30s));
    ASSERT_TRUE(first.status().ok()) << first.error();
    const void* address = first.data();
    const auto* values = static_cast<const float*>(first.data());
    EXPECT_EQ(values[0], 1.0f);
    EXPECT_EQ(values[2 * 4096 - 1], 2.0f);
    first = Handle();
    // The engine thread may drop its reference a moment after completion.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (engine.cached_output_bytes() < 2 * 4096 * sizeof(float) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_GE(engine.cached_output_bytes(), 2 * 4096 * sizeof(float));
    Handle second = engine.allgather(t, {.name = "gather"});
    ASSERT_TRUE(second.wait(30s));
    EXPECT_EQ(second.data(), address);
  });
}

TEST(PublicOutputCache, OutputsOutliveShutdown) {
  std::shared_ptr<void> kept;
  run_public(1, [&](Engine& engine, int) {
    kept = engine.allocate_output(4096);
    std::memset(kept.get(), 7, 4096);
  });
  EXPECT_EQ(static_cast<unsigned char*>(kept.get())[4095], 7);
  kept.reset();  // returns to a closed cache: freed (ASan would see a leak or a double free)
}

}  // namespace
}  // namespace kolo

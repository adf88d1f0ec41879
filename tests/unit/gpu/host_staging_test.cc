// The host-staged pipeline over a DeviceRuntime test double whose "stream"
// really is asynchronous: copies are queued and run only when the host asks
// an event recorded after them (or when a test lets the GPU run), so a
// collective that read a chunk before waiting for its copy, or a copy back
// that a later copy down overwrote, gives a wrong result here. "Device
// memory" is host memory the double hands out.
#include "gpu/host_staging.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <numeric>
#include <vector>

#include "common/error.h"

namespace kolo::gpu {
namespace {

class DeferredRuntime final : public DeviceRuntime {
 public:
  DeviceCount device_count() override { return {1, ""}; }
  std::string describe() override { return "deferred test runtime"; }
  StreamHandle create_stream(int) override { return &queue_; }
  void destroy_stream(StreamHandle) override {}
  void synchronize_stream(StreamHandle) override { run_all(); }
  EventHandle create_event(int) override {
    events_.push_back(std::make_unique<bool>(false));
    ++live_events;
    return events_.back().get();
  }
  void destroy_event(EventHandle) override { --live_events; }
  void record_event(EventHandle event, StreamHandle) override {
    *static_cast<bool*>(event) = false;
    queue_.push_back([event] { *static_cast<bool*>(event) = true; });
  }
  void stream_wait_event(StreamHandle, EventHandle) override {}
  bool event_done(EventHandle event) override {
    // Asked about an event, the "GPU" runs the queue up to it (a stuck
    // GPU runs nothing).
    auto* done = static_cast<bool*>(event);
    while (!stuck && !*done && !queue_.empty()) step();
    return *done;
  }
  void* allocate_device(int, size_t) override { return nullptr; }
  void free_device(void*) override {}
  void* allocate_pinned(size_t bytes) override {
    ++live_pinned;
    pinned_.push_back(std::vector<char>(bytes, '\x55'));
    return pinned_.back().data();
  }
  void free_pinned(void*) override { --live_pinned; }
  void copy_async(void* destination, const void* source, size_t bytes, CopyKind kind,
                  StreamHandle) override {
    (kind == CopyKind::kDeviceToHost ? copies_down : copies_up) += 1;
    // The bytes are read when the copy runs, not when it is queued.
    queue_.push_back([=] { std::memcpy(destination, source, bytes); });
  }

  void run_all() {
    while (!queue_.empty()) step();
  }
  size_t queued() const { return queue_.size(); }

  int copies_down = 0;
  int copies_up = 0;
  int live_events = 0;
  int live_pinned = 0;
  bool stuck = false;

 private:
  void step() {
    std::function<void()> next = std::move(queue_.front());
    queue_.pop_front();
    next();
  }
  std::deque<std::function<void()>> queue_;
  std::vector<std::unique_ptr<bool>> events_;
  std::deque<std::vector<char>> pinned_;
};

StagingOptions chunks_of(size_t bytes) {
  StagingOptions options;
  options.chunk_bytes = bytes;
  options.copy_timeout = std::chrono::milliseconds(200);
  return options;
}

// Tripling every float in place stands for a 3-rank allreduce of equal data.
void triple(void* host, size_t, size_t bytes) {
  float* values = static_cast<float*>(host);
  for (size_t i = 0; i < bytes / sizeof(float); ++i) values[i] *= 3.0f;
}

TEST(HostStaging, EveryChunkGoesDownThroughTheCollectiveAndBack) {
  for (size_t count : {size_t{1}, size_t{7}, size_t{64}, size_t{1000}, size_t{1001}}) {
    DeferredRuntime runtime;
    std::vector<float> device(count);
    std::iota(device.begin(), device.end(), 1.0f);
    std::vector<size_t> offsets;
    {
      // 10 bytes per chunk: rounded down to 2 floats.
      HostStagingPipeline pipeline(runtime, 0, runtime.create_stream(0), chunks_of(10));
      EXPECT_EQ(pipeline.chunk_bytes(sizeof(float)), 8u);
      pipeline.run(device.data(), count * sizeof(float), sizeof(float),
                   [&](void* host, size_t offset, size_t bytes) {
                     offsets.push_back(offset);
                     EXPECT_EQ(bytes % sizeof(float), 0u);
                     triple(host, offset, bytes);
                   });
      EXPECT_EQ(runtime.queued(), 0u);  // run() returns with every copy done
    }
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(device[i], 3.0f * (i + 1)) << count << " " << i;
    const size_t chunks = (count + 1) / 2;
    ASSERT_EQ(offsets.size(), chunks);
    for (size_t k = 0; k < chunks; ++k) EXPECT_EQ(offsets[k], k * 8);
    EXPECT_EQ(runtime.copies_down, static_cast<int>(chunks));
    EXPECT_EQ(runtime.copies_up, static_cast<int>(chunks));
    EXPECT_EQ(runtime.live_pinned, 0);  // two buffers, freed with the pipeline
  }
}

TEST(HostStaging, TheNextChunkIsInFlightWhileTheCollectiveRuns) {
  DeferredRuntime runtime;
  std::vector<float> device(8, 1.0f);
  HostStagingPipeline pipeline(runtime, 0, runtime.create_stream(0), chunks_of(8));
  std::vector<size_t> queued_during;
  pipeline.run(device.data(), device.size() * sizeof(float), sizeof(float),
               [&](void* host, size_t offset, size_t bytes) {
                 queued_during.push_back(runtime.queued());
                 triple(host, offset, bytes);
               });
  // While chunk 0 is reduced, chunk 1's copy down and its event are queued.
  ASSERT_EQ(queued_during.size(), 4u);
  EXPECT_GE(queued_during[0], 2u);
  EXPECT_EQ(device, std::vector<float>(8, 3.0f));
}

TEST(HostStaging, AnEmptyBufferRunsNothing) {
  DeferredRuntime runtime;
  HostStagingPipeline pipeline(runtime, 0, runtime.create_stream(0), chunks_of(64));
  bool ran = false;
  pipeline.run(nullptr, 0, sizeof(float), [&](void*, size_t, size_t) { ran = true; });
  EXPECT_FALSE(ran);
  EXPECT_EQ(runtime.copies_down + runtime.copies_up, 0);
}

TEST(HostStaging, ACollectiveThatThrowsLeavesNoCopyInFlight) {
  DeferredRuntime runtime;
  std::vector<float> device(16, 1.0f);
  HostStagingPipeline pipeline(runtime, 0, runtime.create_stream(0), chunks_of(16));
  int calls = 0;
  EXPECT_THROW(pipeline.run(device.data(), device.size() * sizeof(float), sizeof(float),
                            [&](void* host, size_t offset, size_t bytes) {
                              if (++calls == 2) throw PeerLostError("rank 1 (host b) lost");
                              triple(host, offset, bytes);
                            }),
               PeerLostError);
  EXPECT_EQ(runtime.queued(), 0u);  // drained before the exception left run()
  EXPECT_EQ(device[0], 3.0f);       // the first chunk completed
}

TEST(HostStaging, AStuckCopyTimesOut) {
  DeferredRuntime runtime;
  runtime.stuck = true;
  std::vector<float> device(4, 1.0f);
  HostStagingPipeline pipeline(runtime, 0, runtime.create_stream(0), chunks_of(8));
  try {
    pipeline.run(device.data(), device.size() * sizeof(float), sizeof(float), triple);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("not done after 200 ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kolo::gpu

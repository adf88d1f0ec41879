// The engine's timeline: every phase of a tensor's path appears, the file
// is valid JSON after shutdown, and it can be started and stopped at run
// time.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "common/error.h"
#include "rendezvous/memory_store.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

std::string temp_path(const std::string& tag) {
  return "/tmp/kolo-engine-timeline-" + std::to_string(getpid()) + "-" + tag + ".json";
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

std::set<std::string> event_names(const nlohmann::json& trace) {
  std::set<std::string> names;
  for (const auto& event : trace) {
    if (event.contains("name")) names.insert(event["name"].get<std::string>());
  }
  return names;
}

void fused_steps(Engine& engine, int rank, int steps) {
  for (int step = 0; step < steps; ++step) {
    std::vector<std::vector<float>> bufs(4, std::vector<float>(8, 1.0f));
    std::vector<TensorArgs> tensors;
    for (int t = 0; t < 4; ++t) {
      tensors.push_back({"layer" + std::to_string(t),
                         bufs[t].data(),
                         bufs[t].data(),
                         DataType::kFloat32,
                         {8},
                         kCpuDevice});
    }
    for (auto& h : engine.grouped_allreduce(tensors, {ReduceOp::kSum}))
      ASSERT_TRUE(wait_for(h).ok());
    std::vector<float> big(16, 1.0f);
    auto h =
        engine.broadcast({"big", big.data(), big.data(), DataType::kFloat32, {16}, kCpuDevice}, 0);
    ASSERT_TRUE(wait_for(h).ok());
  }
}

TEST(EngineTimeline, ContainsEveryPhaseAndParsesAfterShutdown) {
  std::string path = temp_path("init");
  testing::EngineRunOptions run;
  run.configure = [&](Config& c) {
    c.settings.set("KOLO_SHM", "0");  // over TCP, fused tensors go through the fusion buffer
    if (c.layout.rank == 0) {
      c.engine.timeline_path = path;
      c.engine.timeline_mark_cycles = true;
    }
  };
  run_engines(
      2, [](Engine& engine, int rank) { fused_steps(engine, rank, 3); }, run);
  nlohmann::json trace = read_json(path);
  ASSERT_TRUE(trace.is_array());
  auto names = event_names(trace);
  for (const char* phase :
       {"NEGOTIATE_ALLREDUCE", "ALLREDUCE", "QUEUE", "MEMCPY_IN_FUSION_BUFFER",
        "MEMCPY_OUT_FUSION_BUFFER", "NEGOTIATE_BROADCAST", "BROADCAST", "CYCLE_START"}) {
    EXPECT_EQ(names.count(phase), 1u) << "missing phase " << phase;
  }
  std::set<std::string> rows;
  for (const auto& event : trace) {
    if (event.value("name", "") == "process_name")
      rows.insert(event["args"]["name"].get<std::string>());
  }
  for (const char* tensor : {"layer0", "layer3", "big"})
    EXPECT_EQ(rows.count(tensor), 1u) << tensor;
  std::remove(path.c_str());
}

TEST(EngineTimeline, SharedMemoryFusesWithoutTheFusionBufferCopies) {
  std::string path = temp_path("shm");
  testing::EngineRunOptions run;
  run.configure = [&](Config& c) {
    if (c.layout.rank == 0) c.engine.timeline_path = path;
  };
  run_engines(
      2, [](Engine& engine, int rank) { fused_steps(engine, rank, 3); }, run);
  auto names = event_names(read_json(path));
  EXPECT_EQ(names.count("ALLREDUCE"), 1u);
  EXPECT_EQ(names.count("MEMCPY_IN_FUSION_BUFFER"), 0u) << "the parts go to shared memory directly";
  EXPECT_EQ(names.count("MEMCPY_OUT_FUSION_BUFFER"), 0u);
  std::remove(path.c_str());
}

TEST(EngineTimeline, StartedAndStoppedAtRunTime) {
  std::string path = temp_path("runtime");
  run_engines(2, [&](Engine& engine, int rank) {
    fused_steps(engine, rank, 1);
    if (rank == 0) engine.start_timeline(path, false);
    fused_steps(engine, rank, 2);
    if (rank == 0) engine.stop_timeline();
    fused_steps(engine, rank, 1);
  });
  nlohmann::json trace = read_json(path);
  auto names = event_names(trace);
  EXPECT_EQ(names.count("ALLREDUCE"), 1u);
  EXPECT_EQ(names.count("CYCLE_START"), 0u);
  std::remove(path.c_str());
}

// A timeline path that cannot be written fails the engine's start with an
// error naming the path. It used to abort the process ("terminate called
// without an active exception"): the background thread was already running
// when the timeline threw, and the unwinding destroyed it unjoined.
TEST(EngineTimeline, UnwritablePathAtStartIsAnErrorNamingIt) {
  const std::string dir = temp_path("dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::vector<std::string> unwritable = {
      temp_path("missing") + "/timeline.json",  // a directory that does not exist
      dir,                                      // a directory
      "/proc/self/kolo-timeline.json",          // where nobody may create files, root included
  };
  for (const auto& path : unwritable) {
    Config config = testing::engine_config(0, 1);
    config.engine.timeline_path = path;
    EngineOptions options;
    options.store = std::make_shared<rendezvous::MemoryStore>();
    try {
      Engine engine(config, std::move(options));
      ADD_FAILURE() << "the engine started with the timeline at " << path;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
    }
  }
  ::rmdir(dir.c_str());
}

// Each full negotiation marks every rank that submitted, dated when it did,
// so a late rank shows as the last and by how much.
TEST(EngineTimeline, MarksEachRankReadyWhenItSubmitted) {
  std::string path = temp_path("ready");
  testing::EngineRunOptions run;
  run.configure = [&](Config& c) {
    c.engine.cache_capacity = 0;  // every step negotiates through rank 0's coordinator
    if (c.layout.rank == 0) c.engine.timeline_path = path;
  };
  constexpr auto kLate = std::chrono::milliseconds(60);
  run_engines(
      3,
      [&](Engine& engine, int rank) {
        for (int step = 0; step < 3; ++step) {
          if (step == 1 && rank == 2) std::this_thread::sleep_for(kLate);
          std::vector<float> value(4, 1.0f);
          auto h = engine.broadcast(
              {"late", value.data(), value.data(), DataType::kFloat32, {4}, kCpuDevice}, 0);
          ASSERT_TRUE(wait_for(h).ok());
        }
      },
      run);
  nlohmann::json trace = read_json(path);
  // The marks of each negotiation: its rank -> ts, in file order.
  std::vector<std::map<int, std::int64_t>> negotiations(1);
  for (const auto& event : trace) {
    if (event.value("ph", "") == "i") negotiations.back()[event["args"]["rank"]] = event["ts"];
    if (event.value("ph", "") == "E" && event.value("name", "") == "NEGOTIATE_BROADCAST")
      negotiations.emplace_back();
  }
  negotiations.pop_back();  // the empty map after the last negotiation
  ASSERT_EQ(negotiations.size(), 3u);
  for (const auto& marks : negotiations) EXPECT_EQ(marks.size(), 3u) << "a mark per rank";
  const auto& late = negotiations[1];
  const std::int64_t late_us = std::chrono::microseconds(kLate).count();
  EXPECT_GE(late.at(2) - std::max(late.at(0), late.at(1)), late_us * 9 / 10);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kolo::core

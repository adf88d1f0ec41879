#include "core/timeline.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "allocation_counter.h"
#include "common/error.h"

namespace kolo::core {
namespace {

using nlohmann::json;

const std::vector<std::string> kActivities = {"QUEUE", "MEMCPY_IN_FUSION_BUFFER", "RING_ALLREDUCE",
                                              "MEMCPY_OUT_FUSION_BUFFER"};

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "kolo-timeline-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The repair documented in timeline.h for a file whose writer was killed.
std::string repair_crashed(const std::string& text) {
  std::size_t last_newline = text.rfind('\n');
  std::string kept = last_newline == std::string::npos ? "" : text.substr(0, last_newline + 1);
  return kept + "]";
}

// One engine cycle for each tensor, the way the engine's background thread
// drives the timeline.
void simulate_cycle(Timeline& timeline, const std::vector<std::string>& tensors,
                    const std::string& op, int ranks) {
  timeline.mark_cycle_start();
  for (const std::string& tensor : tensors) {
    timeline.negotiate_start(tensor, op);
    for (int rank = ranks - 1; rank >= 0; --rank) timeline.negotiate_rank_ready(tensor, rank);
    timeline.negotiate_end(tensor);
  }
  for (const std::string& tensor : tensors) {
    timeline.op_start(tensor, op);
    for (const std::string& activity : kActivities) {
      timeline.activity_start(tensor, activity);
      timeline.activity_end(tensor);
    }
    timeline.op_end(tensor, {{"dtype", "float32"}, {"shape", "[4, 3]"}});
  }
}

// The rows of a parsed trace: tensor name per pid, and each row's events.
struct Rows {
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  std::map<int, std::vector<json>> events;
  std::vector<json> global;
};

Rows rows_of(const json& trace) {
  Rows rows;
  for (const json& event : trace) {
    const std::string ph = event.at("ph");
    if (!event.contains("pid")) {
      rows.global.push_back(event);
    } else if (ph == "M" && event.at("name") == "process_name") {
      const int pid = event.at("pid");
      EXPECT_EQ(rows.names.count(pid), 0u) << "two process_name events for pid " << pid;
      rows.names[pid] = event.at("args").at("name");
    } else if (ph == "M" && event.at("name") == "process_sort_index") {
      rows.sort_index[event.at("pid")] = event.at("args").at("sort_index");
    } else {
      rows.events[event.at("pid")].push_back(event);
    }
  }
  return rows;
}

// The tensor names of the rows in pid order, checking that the pids count
// from 1 in each file.
std::vector<std::string> row_names(const json& trace) {
  std::vector<std::string> names;
  for (const auto& [pid, name] : rows_of(trace).names) {
    EXPECT_EQ(pid, static_cast<int>(names.size()) + 1) << "for " << name;
    names.push_back(name);
  }
  return names;
}

// Every row is named, its B/E events nest with matching names, their
// timestamps never go backwards (rank-ready marks are dated when the rank
// submitted, so they may be older), and (unless the writer was killed)
// nothing is left open.
::testing::AssertionResult well_formed(const json& trace, bool allow_open_spans = false) {
  if (!trace.is_array()) return ::testing::AssertionFailure() << "not a JSON array";
  Rows rows = rows_of(trace);
  for (const auto& [pid, events] : rows.events) {
    if (rows.names.count(pid) == 0)
      return ::testing::AssertionFailure() << "pid " << pid << " unnamed";
    std::vector<std::string> open;
    std::int64_t last_ts = 0;
    for (const json& event : events) {
      const std::int64_t ts = event.at("ts");
      if (event.at("ph") == "i") continue;
      if (ts < last_ts) {
        return ::testing::AssertionFailure()
               << "pid " << pid << ": ts " << ts << " after " << last_ts;
      }
      last_ts = ts;
      const std::string ph = event.at("ph");
      if (ph == "B") {
        open.push_back(event.at("name"));
      } else if (ph == "E") {
        if (open.empty() || open.back() != event.at("name")) {
          return ::testing::AssertionFailure()
                 << "pid " << pid << ": E " << event.at("name") << " does not end the open span";
        }
        open.pop_back();
      }
    }
    if (!open.empty() && !allow_open_spans) {
      return ::testing::AssertionFailure() << "pid " << pid << ": " << open.back() << " left open";
    }
  }
  return ::testing::AssertionSuccess();
}

std::set<std::string> span_names(const json& trace) {
  std::set<std::string> names;
  for (const json& event : trace) {
    if (event.at("ph") == "B") names.insert(event.at("name"));
  }
  return names;
}

TEST(Timeline, SimulatedEngineWritesEveryPhaseOnOneRowPerTensor) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  const std::vector<std::string> tensors = {"grad/fc1.weight", "grad/fc1.bias", "grad/fc2.weight"};
  Timeline timeline;
  timeline.start(path, /*mark_cycles=*/true);
  ASSERT_TRUE(timeline.active());
  for (int cycle = 0; cycle < 3; ++cycle) simulate_cycle(timeline, tensors, "ALLREDUCE", 4);
  simulate_cycle(timeline, {"gather/ids"}, "ALLGATHER", 4);
  timeline.stop();
  EXPECT_FALSE(timeline.active());

  const json trace = json::parse(read_file(path));
  ASSERT_TRUE(well_formed(trace));
  Rows rows = rows_of(trace);
  // Rows are numbered, named and sorted in first-use order.
  std::vector<std::string> expected = tensors;
  expected.push_back("gather/ids");
  EXPECT_EQ(row_names(trace), expected);
  for (const auto& [pid, name] : rows.names) EXPECT_EQ(rows.sort_index[pid], pid) << name;
  std::set<std::string> want = {"NEGOTIATE_ALLREDUCE", "ALLREDUCE", "NEGOTIATE_ALLGATHER",
                                "ALLGATHER"};
  want.insert(kActivities.begin(), kActivities.end());
  EXPECT_EQ(span_names(trace), want);

  // Each rank's readiness is an instant on the tensor's row; each op ends with its args.
  const std::vector<json>& first = rows.events.begin()->second;
  std::set<int> ready_ranks;
  int op_ends_with_args = 0;
  for (const json& event : first) {
    if (event.at("ph") == "i") ready_ranks.insert(event.at("args").at("rank").get<int>());
    if (event.at("ph") == "E" && event.at("name") == "ALLREDUCE") {
      EXPECT_EQ(event.at("args").at("dtype"), "float32");
      EXPECT_EQ(event.at("args").at("shape"), "[4, 3]");
      ++op_ends_with_args;
    }
  }
  EXPECT_EQ(ready_ranks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(op_ends_with_args, 3);
  // The op span holds the activities, in order, after the negotiation.
  std::vector<std::string> begins;
  for (const json& event : first) {
    if (event.at("ph") == "B") begins.push_back(event.at("name"));
  }
  ASSERT_GE(begins.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(begins.begin(), begins.begin() + 6),
            (std::vector<std::string>{"NEGOTIATE_ALLREDUCE", "ALLREDUCE", "QUEUE",
                                      "MEMCPY_IN_FUSION_BUFFER", "RING_ALLREDUCE",
                                      "MEMCPY_OUT_FUSION_BUFFER"}));

  ASSERT_EQ(rows.global.size(), 4u);
  for (const json& marker : rows.global) {
    EXPECT_EQ(marker.at("name"), "CYCLE_START");
    EXPECT_EQ(marker.at("ph"), "i");
    EXPECT_EQ(marker.at("s"), "g");
  }
}

TEST(Timeline, RankReadyMarksAreDatedWhenTheRankSubmitted) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  Timeline timeline;
  timeline.start(path, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  timeline.negotiate_start("t", "ALLREDUCE");
  const auto before = std::chrono::steady_clock::now();
  timeline.negotiate_rank_ready("t", 0);
  timeline.negotiate_rank_ready("t", 1, std::chrono::milliseconds(20));
  // Rank 1's mark is dated 20 ms before its own call, which comes a little
  // after rank 0's: at most this much (ASan builds took 14 us).
  const auto between_calls_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - before)
                                    .count();
  timeline.negotiate_end("t");
  timeline.stop();
  const json trace = json::parse(read_file(path));
  ASSERT_TRUE(well_formed(trace));
  std::map<int, std::int64_t> ready_ts;
  std::int64_t negotiate_begin = -1;
  const Rows rows = rows_of(trace);
  for (const json& event : rows.events.at(1)) {
    if (event.at("ph") == "i") ready_ts[event.at("args").at("rank")] = event.at("ts");
    if (event.at("ph") == "B") negotiate_begin = event.at("ts");
  }
  ASSERT_EQ(ready_ts.size(), 2u);
  EXPECT_GE(ready_ts[0], negotiate_begin);
  // Rank 1 submitted 20 ms before its own mark was recorded, less the time
  // between the two calls (and 1 us: each ts is truncated to whole
  // microseconds on its own).
  EXPECT_GE(ready_ts[0] - ready_ts[1], 20000 - between_calls_us - 1);
  EXPECT_LE(ready_ts[0] - ready_ts[1], 20000 + 1);
  EXPECT_LT(ready_ts[1], negotiate_begin);
}

TEST(Timeline, CycleMarkersOnlyWhenAskedFor) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  Timeline timeline;
  timeline.start(path, /*mark_cycles=*/false);
  simulate_cycle(timeline, {"t"}, "ALLREDUCE", 2);
  timeline.stop();
  const std::string text = read_file(path);
  EXPECT_EQ(text.find("CYCLE_START"), std::string::npos);
  EXPECT_TRUE(well_formed(json::parse(text)));
}

TEST(Timeline, NamesNeedingEscapingRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  const std::vector<std::string> names = {"plain",
                                          "",
                                          "quote\"d",
                                          "back\\slash",
                                          "new\nline\ttab\r",
                                          std::string("nul\0byte", 8),
                                          "\x01\x1f\x7f",
                                          "grüße/日本語/😀",
                                          "{\"json\": [1, 2]},"};
  Timeline timeline;
  timeline.start(path, false);
  for (const std::string& name : names) {
    timeline.op_start(name, "ALL\"REDUCE");
    timeline.activity_start(name, "back\\slash\n");
    timeline.activity_end(name);
    timeline.op_end(name, {{"shape\"", name}});
  }
  timeline.op_start("\xff\xc3(\xed\xa0\x80", "ALLREDUCE");  // invalid UTF-8, surrogate
  timeline.op_end("\xff\xc3(\xed\xa0\x80");
  timeline.stop();

  const json trace = json::parse(read_file(path));
  ASSERT_TRUE(well_formed(trace));
  Rows rows = rows_of(trace);
  ASSERT_EQ(rows.names.size(), names.size() + 1);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    EXPECT_EQ(rows.names[pid], names[i]) << "pid " << pid;
    EXPECT_EQ(rows.events[pid].front().at("name"), "ALL\"REDUCE");
    EXPECT_EQ(rows.events[pid].at(1).at("name"), "back\\slash\n");
    EXPECT_EQ(rows.events[pid].back().at("args").at("shape\""), names[i]);
  }
  // Each byte that is not valid UTF-8 becomes U+FFFD; the rest survives.
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(rows.names[static_cast<int>(names.size()) + 1],
            replacement + replacement + "(" + replacement + replacement + replacement);
}

TEST(Timeline, StartStopStartWritesSeparateFiles) {
  TempDir dir;
  const std::string first = dir.file("first.json");
  const std::string second = dir.file("second.json");
  const std::string third = dir.file("third.json");
  Timeline timeline;
  timeline.start(first, false);
  simulate_cycle(timeline, {"a"}, "ALLREDUCE", 2);
  timeline.stop();
  timeline.stop();  // idempotent
  timeline.start(second, false);
  simulate_cycle(timeline, {"b"}, "BROADCAST", 2);
  // Starting while active closes the current file and switches.
  timeline.start(third, false);
  simulate_cycle(timeline, {"c"}, "ALLGATHER", 2);
  timeline.stop();

  const std::vector<std::pair<std::string, std::string>> expected = {
      {first, "a"}, {second, "b"}, {third, "c"}};
  for (const auto& [path, tensor] : expected) {
    const json trace = json::parse(read_file(path));
    EXPECT_TRUE(well_formed(trace)) << path;
    EXPECT_EQ(row_names(trace), std::vector<std::string>{tensor}) << path;
  }
}

TEST(Timeline, RestartingOnTheSamePathLeavesOnlyTheNewFile) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  Timeline timeline;
  timeline.start(path, false);
  simulate_cycle(timeline, {"old"}, "ALLREDUCE", 2);
  timeline.start(path, false);
  simulate_cycle(timeline, {"new"}, "ALLREDUCE", 2);
  timeline.stop();
  const json trace = json::parse(read_file(path));
  EXPECT_TRUE(well_formed(trace));
  EXPECT_EQ(row_names(trace), std::vector<std::string>{"new"});
}

TEST(Timeline, RecordingWhileInactiveWritesNothingAndAllocatesNothing) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  const std::string tensor = "a tensor name long enough to need the heap if it were copied";
  Timeline timeline;
  EXPECT_FALSE(timeline.active());
  auto record_everything = [&] {
    kolo::testing::start_counting_allocations();
    for (int i = 0; i < 100000; ++i) {
      timeline.mark_cycle_start();
      timeline.negotiate_start(tensor, "ALLREDUCE");
      timeline.negotiate_rank_ready(tensor, 1);
      timeline.negotiate_end(tensor);
      timeline.op_start(tensor, "ALLREDUCE");
      timeline.activity_start(tensor, "QUEUE");
      timeline.activity_end(tensor);
      timeline.op_end(tensor);
    }
    return kolo::testing::stop_counting_allocations();
  };
  EXPECT_EQ(record_everything(), 0u) << "before the first start";
  EXPECT_FALSE(std::filesystem::exists(path));

  timeline.start(path, true);
  simulate_cycle(timeline, {"t"}, "ALLREDUCE", 2);
  timeline.stop();
  const std::string written = read_file(path);
  EXPECT_EQ(record_everything(), 0u) << "after stop";
  EXPECT_EQ(read_file(path), written);
  EXPECT_EQ(timeline.dropped_events(), 0u);
}

TEST(Timeline, SpansAreClosedAndStrayEndsSkipped) {
  TempDir dir;
  const std::string first = dir.file("first.json");
  const std::string second = dir.file("second.json");
  Timeline timeline;
  timeline.start(first, false);
  timeline.negotiate_start("negotiating", "ALLREDUCE");
  timeline.op_start("mid-op", "ALLREDUCE");
  timeline.activity_start("mid-op", "QUEUE");
  timeline.activity_start("mid-op", "RING_ALLREDUCE");  // the engine skipped QUEUE's end
  // The file switches while both tensors are in flight.
  timeline.start(second, false);
  timeline.negotiate_end("negotiating");
  timeline.activity_end("mid-op");
  timeline.op_end("mid-op", {{"dtype", "int8"}});
  timeline.activity_start("never-started", "QUEUE");
  timeline.op_start("next", "ALLREDUCE");
  timeline.stop();

  const json before = json::parse(read_file(first));
  EXPECT_TRUE(well_formed(before));
  EXPECT_EQ(span_names(before),
            (std::set<std::string>{"NEGOTIATE_ALLREDUCE", "ALLREDUCE", "QUEUE", "RING_ALLREDUCE"}));
  const json after = json::parse(read_file(second));
  EXPECT_TRUE(well_formed(after));
  EXPECT_EQ(row_names(after), std::vector<std::string>{"next"}) << after.dump();
}

TEST(Timeline, FullQueueDropsAndCountsButKeepsTheFileValid) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  Timeline timeline(/*max_queued_bytes=*/2048);
  timeline.start(path, true);
  for (int i = 0; i < 2000; ++i)
    simulate_cycle(timeline, {"t" + std::to_string(i % 7)}, "ALLREDUCE", 2);
  timeline.stop();
  EXPECT_GT(timeline.dropped_events(), 0u);
  EXPECT_TRUE(well_formed(json::parse(read_file(path))));
}

TEST(Timeline, RecordingWhileAnotherThreadStartsAndStops) {
  TempDir dir;
  Timeline timeline;
  std::atomic<bool> done{false};
  std::thread engine([&] {
    const std::vector<std::string> tensors = {"x", "y", "z"};
    while (!done.load()) {
      simulate_cycle(timeline, tensors, "ALLREDUCE", 3);
      // Paced like the engine's default 1 ms cycle, so the files stay small
      // enough to check quickly under sanitizers.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::string> paths;
  for (int i = 0; i < 20; ++i) {
    paths.push_back(dir.file("timeline-" + std::to_string(i) + ".json"));
    timeline.start(paths.back(), i % 2 == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(i % 5 == 0 ? 120 : 5));
    if (i % 4 != 3) timeline.stop();  // otherwise the next start switches files
  }
  done = true;
  engine.join();
  timeline.stop();
  for (const std::string& path : paths) {
    const std::string text = read_file(path);
    ASSERT_TRUE(json::accept(text)) << path;
    EXPECT_TRUE(well_formed(json::parse(text))) << path;
  }
}

TEST(Timeline, CrashedWriterLeavesFileThatRepairsToValidJson) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child records, then waits to be killed with its writer running.
    try {
      Timeline timeline;
      timeline.start(path, true);
      for (int i = 0; i < 50; ++i) simulate_cycle(timeline, {"p", "q"}, "ALLREDUCE", 2);
      timeline.op_start("in flight when killed", "ALLREDUCE");
      for (;;) ::pause();
    } catch (...) {
      ::_exit(1);
    }
  }
  // Killed only once the last event reached the file, so it was flushed
  // without stop().
  bool flushed = false;
  for (int i = 0; i < 1000 && !flushed; ++i) {
    flushed = read_file(path).find("in flight when killed") != std::string::npos;
    if (!flushed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(flushed) << "the child's events never reached " << path;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  const std::string text = read_file(path);
  EXPECT_FALSE(json::accept(text)) << "the file has no closing bracket yet";
  EXPECT_EQ(text.back(), '\n');
  const std::string repaired = repair_crashed(text);
  ASSERT_TRUE(json::accept(repaired)) << repaired;
  const json trace = json::parse(repaired);
  EXPECT_TRUE(well_formed(trace, /*allow_open_spans=*/true));
  EXPECT_EQ(row_names(trace), (std::vector<std::string>{"p", "q", "in flight when killed"}));
}

// A kill can also cut a write short at any byte: every prefix of the file
// (beyond the first line, written before start() returns) must repair.
TEST(Timeline, EveryTruncationRepairsToValidJson) {
  TempDir dir;
  const std::string path = dir.file("timeline.json");
  Timeline timeline;
  timeline.start(path, true);
  simulate_cycle(timeline, {"a", "b\"\n"}, "ALLREDUCE", 2);
  timeline.stop();
  const std::string complete = read_file(path);
  ASSERT_EQ(complete.substr(complete.size() - 2), "]\n");
  for (std::size_t length = 2; length <= complete.size(); ++length) {
    const std::string repaired = repair_crashed(complete.substr(0, length));
    const std::string& candidate = length == complete.size() ? complete : repaired;
    ASSERT_TRUE(json::accept(candidate)) << "cut after " << length << " bytes:\n" << candidate;
  }
}

TEST(Timeline, UnopenablePathThrowsIoErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/timeline.json");
  Timeline timeline;
  try {
    timeline.start(path, false);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(timeline.active());
  timeline.op_start("t", "ALLREDUCE");
  timeline.stop();
}

}  // namespace
}  // namespace kolo::core

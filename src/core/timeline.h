// Timeline: a Chrome trace (JSON Array Format) of what the engine does to each
// tensor, for Perfetto and chrome://tracing, compatible with Horovod's.
//
// Each tensor gets its own row (a pid, numbered in first-use order, named by a
// "process_name" event). On that row: NEGOTIATE_<OP> while ranks agree (with an
// instant event per rank that became ready, dated when that rank submitted the
// tensor), then the <OP> span holding the
// activities QUEUE, MEMCPY_IN_FUSION_BUFFER, the collective and
// MEMCPY_OUT_FUSION_BUFFER. With mark_cycles, each engine cycle starts with a
// global CYCLE_START instant. Timestamps are microseconds since start(); on
// each row they never go backwards, except that a rank-ready mark is dated
// when that rank submitted the tensor, which can be before what precedes it
// (down to below 0 for a tensor submitted before start()).
//
// Threads: recording calls come from the engine's background thread while
// user threads start and stop the timeline; every member function is safe to
// call concurrently. Recording never touches the disk: it stamps the time and
// appends to a bounded in-memory queue that a writer thread, owned by the
// active file, formats and writes at least every 100 ms. When the queue is
// full, events are dropped and counted (and the writer logs a warning) rather
// than stalling the engine on a slow disk.
//
// Rows stay well formed whatever the caller does: the writer tracks the open
// spans of each tensor, so a negotiation or op start first ends what the
// tensor still had open, an end with nothing to end (its start was dropped or
// went to an earlier file) is skipped, and stop() ends every open span. B/E
// events therefore always nest and balance per row.
//
// File format, chosen so that a crash leaves a file viewers still read:
//   [
//   {first event}
//   ,{next event}
//   ...
//   ]
// The first line is written before start() returns and each event is one
// line; every event line but the first begins with the comma that separates
// it from the previous event. stop() appends the final "]" line, so a file
// whose last line is "]" is complete. A killed process leaves the file
// without it, which the format allows and chrome://tracing accepts as is.
// Since no event line ends in a comma, the repair for a stricter reader (a
// JSON parser; some Perfetto versions) is just to drop any text after the
// last newline (a line cut short mid-write) and append "]".
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace kolo::core {

// Extra fields of an op's end event, e.g. {{"dtype", "float32"}, {"shape", "[2, 3]"}}.
// Plain strings that the writer escapes, rather than caller-made JSON, so no
// argument can make the file invalid.
using TimelineArgs = std::vector<std::pair<std::string, std::string>>;

class Timeline {
 public:
  // Events waiting for the writer may take this much memory before new ones
  // are dropped: far more than a healthy disk ever lets pile up in 100 ms.
  static constexpr std::size_t kDefaultMaxQueuedBytes = 64u << 20;

  explicit Timeline(std::size_t max_queued_bytes = kDefaultMaxQueuedBytes);
  ~Timeline();  // stops if active
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Truncates or creates `path`, writes the opening line and starts the writer.
  // When active, first stops the current file (it is closed as valid JSON), so
  // starting again with the same path is safe. Throws kolo::IoError naming the
  // path if it cannot be opened; the timeline is then inactive.
  void start(const std::string& path, bool mark_cycles);
  // Writes what was recorded before the call, ends open spans, writes the
  // closing "]", closes the file and joins the writer. Does nothing when
  // inactive. Events recorded concurrently with stop() may be left out.
  void stop();
  // One relaxed atomic load, so callers can skip building arguments when off.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // Recording. Each does nothing when inactive. `op` and `activity` are names
  // such as "ALLREDUCE" or "RING_ALLREDUCE".
  void negotiate_start(std::string_view tensor, std::string_view op);
  // `rank` submitted `tensor` `age` ago: the mark is dated then, so it may
  // precede the row's NEGOTIATE begin (rank 0 learns of it only later).
  void negotiate_rank_ready(std::string_view tensor, int rank,
                            std::chrono::microseconds age = std::chrono::microseconds(0));
  void negotiate_end(std::string_view tensor);
  void op_start(std::string_view tensor, std::string_view op);
  void activity_start(std::string_view tensor, std::string_view activity);
  void activity_end(std::string_view tensor);
  void op_end(std::string_view tensor, TimelineArgs args = {});
  // Only recorded when the current file was started with mark_cycles.
  void mark_cycle_start();

  // Events dropped because the queue was full, since construction.
  std::uint64_t dropped_events() const;

 private:
  using Clock = std::chrono::steady_clock;

  enum class Kind : std::uint8_t {
    kNegotiateStart,
    kRankReady,
    kNegotiateEnd,
    kOpStart,
    kActivityStart,
    kActivityEnd,
    kOpEnd,
    kCycleStart,
  };

  // Raw and unformatted: formatting is the writer's job, off the engine's thread.
  struct Event {
    Kind kind;
    Clock::time_point time;
    std::string tensor;
    std::string name;  // op or activity
    int rank = 0;
    TimelineArgs args;
  };

  class TraceFormatter;  // per-file state of the writer thread

  void record(Kind kind, std::string_view tensor, std::string_view name, int rank = 0,
              TimelineArgs args = {}, Clock::duration backdate = Clock::duration::zero());
  void stop_locked();  // with control_mu_ held
  void write_loop(int fd, std::string path, Clock::time_point origin);

  const std::size_t max_queued_bytes_;
  std::atomic<bool> active_{false};

  // Serialises start() and stop() with each other; never taken by recording.
  std::mutex control_mu_;
  std::thread writer_;  // guarded by control_mu_

  // The hand-off between recording threads and the writer.
  mutable std::mutex mu_;
  std::condition_variable wake_writer_;
  std::vector<Event> queue_;              // guarded by mu_
  std::size_t queued_bytes_ = 0;          // guarded by mu_
  bool accepting_ = false;                // guarded by mu_; true between start and stop
  bool mark_cycles_ = false;              // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_; tells the writer to finish
  Clock::time_point stop_time_;           // guarded by mu_; ends the spans left open
  std::uint64_t dropped_total_ = 0;       // guarded by mu_
  std::uint64_t dropped_unreported_ = 0;  // guarded by mu_; the writer logs and resets it
};

}  // namespace kolo::core

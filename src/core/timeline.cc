#include "core/timeline.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <unordered_map>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/logging.h"

namespace kolo::core {
namespace {

// The writer wakes at least this often, so the file is never further behind.
constexpr auto kFlushInterval = std::chrono::milliseconds(100);
// ... and sooner when this many events wait, to keep batches and memory small.
constexpr std::size_t kWakeEvents = 4096;

// Returns 0 or the errno of the failed write.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// Length of the well-formed UTF-8 sequence at the start of `s` (which is not
// ASCII), or 0 if there is none. Follows RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF, which is what strict JSON parsers accept.
std::size_t utf8_sequence_length(std::string_view s) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < second_min || byte(1) > second_max) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

// Appends `text` as a JSON string literal. Tensor names are arbitrary user
// bytes: valid UTF-8 is kept as is, control characters are escaped, and each
// byte that is not part of valid UTF-8 becomes U+FFFD, since a single invalid
// byte would make the whole file unreadable.
void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      std::size_t length = utf8_sequence_length(text.substr(i));
      if (length == 0) {
        out += "\xEF\xBF\xBD";
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace

// Turns raw events into trace lines for one file. Lives on the writer thread
// only, so the per-tensor state needs no locking.
class Timeline::TraceFormatter {
 public:
  explicit TraceFormatter(Clock::time_point origin) : origin_(origin) {}

  void add(const Event& event) {
    const std::int64_t ts = micros(event.time);
    if (event.kind == Kind::kCycleStart) {
      line() += R"({"name":"CYCLE_START","ph":"i","s":"g",)";
      fmt::format_to(std::back_inserter(out_), "\"ts\":{}}}\n", ts);
      return;
    }
    // Only a start creates a row: an end for an unseen tensor belongs to a
    // span whose start went to an earlier file or was dropped.
    const bool starts = event.kind == Kind::kNegotiateStart || event.kind == Kind::kOpStart ||
                        event.kind == Kind::kRankReady;
    Row* row = find_row(event.tensor, starts);
    if (row == nullptr) return;
    switch (event.kind) {
      case Kind::kNegotiateStart:
        end_all(*row, ts);
        begin(*row, "NEGOTIATE_" + event.name, ts);
        row->negotiating = true;
        break;
      case Kind::kRankReady:
        fmt::format_to(std::back_inserter(line()),
                       R"({{"name":"{0}","ph":"i","s":"t","ts":{1},"pid":{2},"tid":{2},)"
                       R"("args":{{"rank":{0}}}}})"
                       "\n",
                       event.rank, ts, row->pid);
        break;
      case Kind::kNegotiateEnd:
        if (row->negotiating) end_all(*row, ts);
        break;
      case Kind::kOpStart:
        end_all(*row, ts);
        begin(*row, event.name, ts);
        break;
      case Kind::kActivityStart:
        if (row->depth == 0 || row->negotiating) break;  // activities live inside an op
        if (row->depth == 2) end(*row, ts, nullptr);
        begin(*row, event.name, ts);
        break;
      case Kind::kActivityEnd:
        if (row->depth == 2) end(*row, ts, nullptr);
        break;
      case Kind::kOpEnd:
        if (row->depth == 0 || row->negotiating) break;
        if (row->depth == 2) end(*row, ts, nullptr);
        end(*row, ts, &event.args);
        break;
      case Kind::kCycleStart:
        break;
    }
  }

  // Ends every open span at `end` and closes the JSON array.
  void finish(Clock::time_point end) {
    const std::int64_t ts = micros(end);
    for (Row* row : rows_by_pid_) end_all(*row, ts);
    out_ += "]\n";
  }

  const std::string& text() const { return out_; }
  void clear_text() { out_.clear(); }

 private:
  struct Row {
    int pid = 0;
    int depth = 0;             // open spans: 0, 1 (negotiation or op) or 2 (op + activity)
    bool negotiating = false;  // the outer span is a negotiation
    std::string open[2];       // names of the open spans, outermost first
  };

  std::int64_t micros(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - origin_).count();
  }

  // Starts the next line: every event after the first begins with its comma.
  std::string& line() {
    if (!first_line_) out_ += ',';
    first_line_ = false;
    return out_;
  }

  Row* find_row(const std::string& tensor, bool create) {
    auto it = rows_.find(tensor);
    if (it != rows_.end()) return &it->second;
    if (!create) return nullptr;
    Row& row = rows_[tensor];
    row.pid = static_cast<int>(rows_by_pid_.size()) + 1;
    rows_by_pid_.push_back(&row);
    line() += R"({"name":"process_name","ph":"M",)";
    fmt::format_to(std::back_inserter(out_), R"("pid":{0},"tid":{0},"args":{{"name":)", row.pid);
    append_json_string(out_, tensor);
    out_ += "}}\n";
    fmt::format_to(std::back_inserter(line()),
                   R"({{"name":"process_sort_index","ph":"M","pid":{0},"tid":{0},)"
                   R"("args":{{"sort_index":{0}}}}})"
                   "\n",
                   row.pid);
    return &row;
  }

  void begin(Row& row, std::string name, std::int64_t ts) {
    line() += R"({"name":)";
    append_json_string(out_, name);
    fmt::format_to(std::back_inserter(out_),
                   R"(,"ph":"B","ts":{},"pid":{},"tid":{}}})"
                   "\n",
                   ts, row.pid, row.pid);
    row.open[row.depth++] = std::move(name);
  }

  void end(Row& row, std::int64_t ts, const TimelineArgs* args) {
    const std::string& name = row.open[--row.depth];
    line() += R"({"name":)";
    append_json_string(out_, name);
    fmt::format_to(std::back_inserter(out_), R"(,"ph":"E","ts":{},"pid":{},"tid":{})", ts, row.pid,
                   row.pid);
    if (args != nullptr && !args->empty()) {
      out_ += R"(,"args":{)";
      for (std::size_t i = 0; i < args->size(); ++i) {
        if (i > 0) out_ += ',';
        append_json_string(out_, (*args)[i].first);
        out_ += ':';
        append_json_string(out_, (*args)[i].second);
      }
      out_ += '}';
    }
    out_ += "}\n";
    if (row.depth == 0) row.negotiating = false;
  }

  void end_all(Row& row, std::int64_t ts) {
    while (row.depth > 0) end(row, ts, nullptr);
  }

  const Clock::time_point origin_;
  std::unordered_map<std::string, Row> rows_;  // nodes never move, so pointers stay valid
  std::vector<Row*> rows_by_pid_;
  bool first_line_ = true;
  std::string out_;
};

Timeline::Timeline(std::size_t max_queued_bytes) : max_queued_bytes_(max_queued_bytes) {}

Timeline::~Timeline() {
  stop();
}

void Timeline::start(const std::string& path, bool mark_cycles) {
  std::lock_guard control(control_mu_);
  stop_locked();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw IoError(fmt::format("timeline: cannot open '{}': {}", path, errno_text(errno)));
  }
  if (int err = write_all(fd, "[\n"); err != 0) {
    ::close(fd);
    throw IoError(fmt::format("timeline: cannot write '{}': {}", path, errno_text(err)));
  }
  const Clock::time_point origin = Clock::now();
  try {
    writer_ = std::thread(&Timeline::write_loop, this, fd, path, origin);
  } catch (...) {
    ::close(fd);
    throw;
  }
  {
    std::lock_guard lock(mu_);
    mark_cycles_ = mark_cycles;
    accepting_ = true;
  }
  active_.store(true, std::memory_order_relaxed);
}

void Timeline::stop() {
  std::lock_guard control(control_mu_);
  stop_locked();
}

void Timeline::stop_locked() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    active_.store(false, std::memory_order_relaxed);
    accepting_ = false;
    stopping_ = true;
    stop_time_ = Clock::now();
  }
  wake_writer_.notify_one();
  writer_.join();
  std::lock_guard lock(mu_);
  stopping_ = false;
}

std::uint64_t Timeline::dropped_events() const {
  std::lock_guard lock(mu_);
  return dropped_total_;
}

void Timeline::record(Kind kind, std::string_view tensor, std::string_view name, int rank,
                      TimelineArgs args, Clock::duration backdate) {
  if (!active()) return;
  std::size_t bytes = sizeof(Event) + tensor.size() + name.size();
  for (const auto& [key, value] : args)
    bytes += sizeof(TimelineArgs::value_type) + key.size() + value.size();
  // Copies are made before taking the lock, to keep the writer's swap quick.
  Event event{kind, {}, std::string(tensor), std::string(name), rank, std::move(args)};
  std::lock_guard lock(mu_);
  if (!accepting_ || (kind == Kind::kCycleStart && !mark_cycles_)) return;
  if (queued_bytes_ + bytes > max_queued_bytes_) {
    ++dropped_total_;
    ++dropped_unreported_;
    return;
  }
  queued_bytes_ += bytes;
  // Stamped under the lock, so queue order is time order and each row's
  // spans never go backwards even with several recording threads (only a
  // backdated instant mark may be older than what precedes it).
  event.time = Clock::now() - backdate;
  queue_.push_back(std::move(event));
  if (queue_.size() == kWakeEvents) wake_writer_.notify_one();
}

void Timeline::write_loop(int fd, std::string path, Clock::time_point origin) {
  TraceFormatter trace(origin);
  std::vector<Event> batch;
  bool write_failed = false;
  for (bool finishing = false; !finishing;) {
    std::uint64_t dropped = 0;
    Clock::time_point stop_time;
    {
      std::unique_lock lock(mu_);
      wake_writer_.wait_for(lock, kFlushInterval,
                            [&] { return stopping_ || queue_.size() >= kWakeEvents; });
      batch.swap(queue_);  // both vectors keep their capacity: no allocation in steady state
      queued_bytes_ = 0;
      finishing = stopping_;
      stop_time = stop_time_;
      dropped = std::exchange(dropped_unreported_, 0);
    }
    if (dropped > 0) {
      KOLO_LOG_WARNING("timeline: dropped {} events: writing '{}' cannot keep up", dropped, path);
    }
    for (const Event& event : batch) trace.add(event);
    batch.clear();
    if (finishing) trace.finish(stop_time);
    if (!write_failed && !trace.text().empty()) {
      if (int err = write_all(fd, trace.text()); err != 0) {
        // Keep draining so recording goes on and memory stays bounded.
        write_failed = true;
        KOLO_LOG_WARNING("timeline: writing '{}' failed: {}; discarding further events", path,
                         errno_text(err));
      }
    }
    trace.clear_text();
  }
  if (::close(fd) != 0 && !write_failed) {
    KOLO_LOG_WARNING("timeline: closing '{}' failed: {}", path, errno_text(errno));
  }
}

void Timeline::negotiate_start(std::string_view tensor, std::string_view op) {
  record(Kind::kNegotiateStart, tensor, op);
}

void Timeline::negotiate_rank_ready(std::string_view tensor, int rank,
                                    std::chrono::microseconds age) {
  record(Kind::kRankReady, tensor, {}, rank, {}, age);
}

void Timeline::negotiate_end(std::string_view tensor) {
  record(Kind::kNegotiateEnd, tensor, {});
}

void Timeline::op_start(std::string_view tensor, std::string_view op) {
  record(Kind::kOpStart, tensor, op);
}

void Timeline::activity_start(std::string_view tensor, std::string_view activity) {
  record(Kind::kActivityStart, tensor, activity);
}

void Timeline::activity_end(std::string_view tensor) {
  record(Kind::kActivityEnd, tensor, {});
}

void Timeline::op_end(std::string_view tensor, TimelineArgs args) {
  record(Kind::kOpEnd, tensor, {}, 0, std::move(args));
}

void Timeline::mark_cycle_start() {
  record(Kind::kCycleStart, {}, {});
}

}  // namespace kolo::core

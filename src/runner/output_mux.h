// Multiplexes every rank's stdout and stderr onto the launcher's, one whole
// line at a time, tagged as horovodrun does: "[3]<stdout>:text" (with
// --prefix-output-with-timestamp, "Mon Nov 21 12:34:56 2026[3]<stdout>:").
// A line is written with one write() call once complete, so lines of
// different ranks never interleave or split. Lines longer than
// kMaxLineBytes are cut there (memory stays bounded whatever a rank prints).
// With a directory, each rank's raw output also goes to
// DIR/rank.N/stdout and DIR/rank.N/stderr. Ranks beyond the world size
// given at construction get their channels when they first write (elastic
// workers are numbered as they start).
//
// Single-threaded: the job's event loop calls it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/launch_options.h"
#include "runner/process.h"

namespace kolo::runner {

enum class OutputStream { kStdout = 0, kStderr = 1 };

class OutputMux {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;
  using Clock = std::function<std::string()>;  // the timestamp text

  // Throws IoError if the per-rank directory or files cannot be created.
  OutputMux(int stdout_fd, int stderr_fd, const OutputOptions& options, int world_size,
            Clock clock = {});

  void add(int rank, OutputStream stream, std::string_view bytes);
  // End of that stream: a last line without '\n' is written with one added.
  void finish(int rank, OutputStream stream);

 private:
  struct Channel {
    std::string pending;  // bytes after the last '\n'
    UniqueFd file;        // per-rank copy; invalid if none
  };
  void emit(int rank, OutputStream stream, std::string_view line);  // line includes '\n'
  // Creates the channels (and files) of ranks not seen before.
  Channel& channel(int rank, OutputStream stream);
  void open_files(int rank);

  int fds_[2];
  bool tagged_;
  bool timestamps_;
  Clock clock_;
  std::string directory_;
  std::vector<Channel> channels_;
};

// write() all of `bytes`, retrying on EINTR and short writes; false if the
// descriptor is gone (EPIPE and the like).
bool write_fully(int fd, std::string_view bytes);

}  // namespace kolo::runner

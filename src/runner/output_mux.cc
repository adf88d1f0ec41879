#include "runner/output_mux.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/errno_text.h"
#include "common/error.h"

namespace kolo::runner {
namespace {

std::string asctime_now() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[64] = {};
  std::strftime(text, sizeof text, "%a %b %d %H:%M:%S %Y", &local);
  return text;
}

void make_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw IoError(fmt::format("cannot create output directory {}: {}", path, errno_text(errno)));
}

}  // namespace

bool write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);  // a non-blocking terminal or pipe: wait, bounded, and retry
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

OutputMux::OutputMux(int stdout_fd, int stderr_fd, const OutputOptions& options, int world_size,
                     Clock clock)
    : fds_{stdout_fd, stderr_fd},
      tagged_(options.tagged),
      timestamps_(options.timestamps),
      clock_(clock ? std::move(clock) : Clock(asctime_now)),
      directory_(options.directory) {
  if (!directory_.empty()) make_directory(directory_);
  for (int rank = 0; rank < world_size; ++rank) channel(rank, OutputStream::kStdout);
}

OutputMux::Channel& OutputMux::channel(int rank, OutputStream stream) {
  const size_t index = static_cast<size_t>(rank) * 2 + static_cast<size_t>(stream);
  if (index >= channels_.size()) {
    // A rank seen for the first time (elastic jobs start workers as they go).
    const size_t first_new = channels_.size() / 2;
    channels_.resize((static_cast<size_t>(rank) + 1) * 2);
    for (size_t r = first_new; r <= static_cast<size_t>(rank); ++r) open_files(static_cast<int>(r));
  }
  return channels_[index];
}

void OutputMux::open_files(int rank) {
  if (directory_.empty()) return;
  std::string dir = fmt::format("{}/rank.{}", directory_, rank);
  make_directory(dir);
  for (auto stream : {OutputStream::kStdout, OutputStream::kStderr}) {
    std::string path = dir + (stream == OutputStream::kStdout ? "/stdout" : "/stderr");
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) throw IoError(fmt::format("cannot create {}: {}", path, errno_text(errno)));
    channels_[static_cast<size_t>(rank) * 2 + static_cast<size_t>(stream)].file = std::move(fd);
  }
}

void OutputMux::add(int rank, OutputStream stream, std::string_view bytes) {
  Channel& ch = channel(rank, stream);
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    size_t room = kMaxLineBytes - ch.pending.size();
    if (newline == std::string_view::npos && bytes.size() < room) {
      ch.pending.append(bytes);
      return;
    }
    size_t take = newline == std::string_view::npos ? room : std::min(newline + 1, room);
    ch.pending.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (ch.pending.back() != '\n') ch.pending.push_back('\n');  // cut at the size limit
    emit(rank, stream, ch.pending);
    ch.pending.clear();
  }
}

void OutputMux::finish(int rank, OutputStream stream) {
  Channel& ch = channel(rank, stream);
  if (ch.pending.empty()) return;
  ch.pending.push_back('\n');
  emit(rank, stream, ch.pending);
  ch.pending.clear();
}

void OutputMux::emit(int rank, OutputStream stream, std::string_view line) {
  Channel& ch = channel(rank, stream);
  if (ch.file.valid() && !write_fully(ch.file.get(), line)) ch.file.reset();
  const int fd = fds_[static_cast<int>(stream)];
  if (!tagged_) {
    write_fully(fd, line);
    return;
  }
  std::string tagged = fmt::format("{}[{}]<{}>:", timestamps_ ? clock_() : std::string(), rank,
                                   stream == OutputStream::kStdout ? "stdout" : "stderr");
  tagged.append(line);
  write_fully(fd, tagged);
}

}  // namespace kolo::runner

#include "core/launch/rendezvous_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/unique_fd.h"

namespace kolo::launch {
namespace {

// Letters, digits, '.', '-' and '_' only: a job key becomes one file name.
std::string file_name_for(const std::string& job_key) {
  std::string name;
  for (char c : job_key) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '-' || c == '_';
    name += plain ? c : '_';
  }
  return name.substr(0, 200) + ".rendezvous";
}

std::filesystem::path private_directory(const std::filesystem::path& base) {
  const uid_t uid = ::getuid();
  std::filesystem::path dir = base / fmt::format("kolo-{}", uid);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw IoError(fmt::format("cannot make the rendezvous directory {}: {}", dir.string(),
                              errno_text(errno)));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw IoError(fmt::format("cannot inspect {}: {}", dir.string(), errno_text(errno)));
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0)
    throw IoError(fmt::format(
        "refusing the rendezvous directory {}: it must be a directory owned by uid {} that only "
        "its owner can use (mode 0700); remove it or set KOLO_RENDEZVOUS_DIR",
        dir.string(), uid));
  return dir;
}

}  // namespace

RendezvousFile::RendezvousFile(const std::filesystem::path& base, const std::string& job_key)
    : path_(private_directory(base) / file_name_for(job_key)) {}

void RendezvousFile::publish(const StoreAddress& address) const {
  const std::string temporary = fmt::format("{}.{}", path_.string(), ::getpid());
  {
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid())
      throw IoError(fmt::format("cannot write {}: {}", temporary, errno_text(errno)));
    const std::string text = fmt::format("{} {} {}\n", address.host, address.port, address.secret);
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw IoError(fmt::format("cannot write {}: {}", temporary, errno_text(errno)));
  }
  if (::rename(temporary.c_str(), path_.c_str()) != 0)
    throw IoError(fmt::format("cannot publish {}: {}", path_.string(), errno_text(errno)));
}

std::optional<StoreAddress> RendezvousFile::read() const {
  std::ifstream in(path_);
  StoreAddress address;
  int port = 0;
  if (!(in >> address.host >> port >> address.secret) || port <= 0 || port > 65535)
    return std::nullopt;
  address.port = static_cast<uint16_t>(port);
  return address;
}

void RendezvousFile::remove() const {
  ::unlink(path_.c_str());
}

}  // namespace kolo::launch

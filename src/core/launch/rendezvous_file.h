// The file through which ranks on one host find the store their rank 0
// hosts, when their launcher (mpirun, srun, torchrun on one host) offers no
// channel of its own. It lives in a directory only this user can enter
// (checked, as ssh-agent checks its socket directory), so the secret in it
// is as private as the user's own files; rank 0 writes it atomically and
// removes it when its store closes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kolo::launch {

struct StoreAddress {
  std::string host;
  uint16_t port = 0;
  std::string secret;
};

class RendezvousFile {
 public:
  // `base`: the directory to make "kolo-<uid>" in (KOLO_RENDEZVOUS_DIR);
  // `job_key`: the launcher's name for the job (ForeignLauncher::job_key).
  // Makes the private directory if needed; throws IoError when it exists
  // with another owner or permissions others could use.
  RendezvousFile(const std::filesystem::path& base, const std::string& job_key);

  // Rank 0: replaces the file with `address`, readable by this user only.
  void publish(const StoreAddress& address) const;
  // The address in the file; nullopt while there is none (or half of one).
  std::optional<StoreAddress> read() const;
  void remove() const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kolo::launch

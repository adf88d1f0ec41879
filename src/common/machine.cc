#include "common/machine.h"

#include <unistd.h>

#include <fstream>

namespace kolo {

std::string local_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

std::string machine_identity() {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  return local_hostname() + " " + boot_id;
}

}  // namespace kolo

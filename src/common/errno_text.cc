#include "common/errno_text.h"

#include <cstring>

namespace kolo {

std::string errno_text(int err) {
  return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")";
}

}  // namespace kolo

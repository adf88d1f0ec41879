#include "common/quoted_list.h"

#include <fmt/format.h>

namespace kolo {

std::string quoted_list(std::span<const std::string> names, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) {
    text += (i > 0 ? ", '" : "'") + names[i] + "'";
  }
  if (names.size() > shown) text += fmt::format(" and {} more", names.size() - shown);
  return text;
}

}  // namespace kolo

// Names for an error message, quoted, with a long list cut short.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace kolo {

// "'a', 'b', 'c', 'd' and 3 more": the first `shown` names, then how many were left out; "" for
// no names. Keeps a message about thousands of tensors readable.
std::string quoted_list(std::span<const std::string> names, std::size_t shown = 4);

}  // namespace kolo

// Text from outside Kolo's control (a discovery script's output, a line of
// a hostfile) quoted in a message: cut to a length a terminal line holds and
// with every byte that is not printable ASCII escaped, so a megabyte of
// binary garbage becomes one short, readable, harmless line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kolo {

// At most `limit` characters of the escaped text (\n, \t, \r, \\ and \xNN
// for the quote ' and other bytes outside 0x20..0x7e); a cut text ends in
// "... (N bytes)" with the length of the whole original.
std::string untrusted_text(std::string_view text, std::size_t limit = 80);

}  // namespace kolo

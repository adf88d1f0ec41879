#include "common/untrusted_text.h"

#include <fmt/format.h>

namespace kolo {
namespace {

std::string escaped(unsigned char c) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\\':
      return "\\\\";
    case '\'':  // the text is quoted in '...': a quote in it would end the quote
      return "\\x27";
    default:
      if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
      return fmt::format("\\x{:02x}", c);
  }
}

}  // namespace

std::string untrusted_text(std::string_view text, std::size_t limit) {
  std::string out;
  for (char c : text) {
    std::string piece = escaped(static_cast<unsigned char>(c));
    if (out.size() + piece.size() > limit) return fmt::format("{}... ({} bytes)", out, text.size());
    out += piece;
  }
  return out;
}

}  // namespace kolo

#include "runner/shell_words.h"

#include <fmt/format.h>

#include <cstring>

#include "common/error.h"

namespace kolo::runner {

std::vector<std::string> split_shell_words(const std::string& text, const std::string& what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // "" is a word of its own, so quotes start one too
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (++i == text.size())
        throw InvalidArgument(fmt::format("{}: '{}' ends in a lone backslash", what, text));
      if (text[i] != '\n') word += text[i];  // backslash-newline joins lines
    } else if (c == '\'') {
      const size_t close = text.find('\'', i + 1);
      if (close == std::string::npos)
        throw InvalidArgument(fmt::format("{}: unterminated ' quote in '{}'", what, text));
      word += text.substr(i + 1, close - i - 1);
      i = close;
    } else if (c == '"') {
      for (++i;; ++i) {
        if (i == text.size())
          throw InvalidArgument(fmt::format("{}: unterminated \" quote in '{}'", what, text));
        if (text[i] == '"') break;
        if (text[i] == '\\' && i + 1 < text.size() && std::strchr("$`\"\\\n", text[i + 1])) ++i;
        word += text[i];
      }
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string shell_quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    if (!word.empty() && word.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace kolo::runner

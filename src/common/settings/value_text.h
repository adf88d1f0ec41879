// Reading and writing the text of one setting's value: the syntax of each
// Kind and the range checks, with the words every error uses, so that a
// rank and kolorun refuse a value the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/settings/spec.h"

namespace kolo::settings {

// A value that passed its setting's checks.
struct Parsed {
  std::string text;   // canonical: a choice's first spelling, "1"/"0", sizes in bytes
  double number = 0;  // kInt, kSize, kSeconds, kMillis
  int64_t integer = 0;
  uint64_t bytes = 0;
};

// Checks `text` against `spec`. Throws InvalidArgument worded as
// "VARIABLE='text' must be ..." with `variable` as the user spelled it (the
// KOLO_ name or its HOROVOD_ alias).
Parsed parse_value(const Spec& spec, std::string_view variable, std::string_view text);

// "64M", "1.5G", "4096", "256k" in bytes (powers of 1024); nullopt if not a size.
std::optional<uint64_t> parse_size(std::string_view text);
// The shortest exact spelling: 1048576 -> "1M", 4096 -> "4K", 1000 -> "1000".
std::string format_size(uint64_t bytes);
// A number in plain decimal (no exponent, no trailing zeros): 2.5, 60, 0.001.
std::string format_number(double value);
// The spellings of a kChoice, first of each choice: "auto, 1, 0".
std::string choice_list(const Spec& spec);

}  // namespace kolo::settings

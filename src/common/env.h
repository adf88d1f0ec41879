// Environment readers used only by Config::FromEnv and tools' entry points.
// Each takes a list of names (KOLO_* first, then HOROVOD_* aliases); the
// first one set wins. Bad values throw InvalidArgument naming the variable.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace kolo::env {

std::optional<std::string> get_string(std::initializer_list<const char*> names);
std::optional<int64_t> get_int(std::initializer_list<const char*> names);
std::optional<double> get_double(std::initializer_list<const char*> names);
std::optional<bool> get_bool(std::initializer_list<const char*> names);

// Parses "64M", "1.5G", "4096", "256k" into bytes (powers of 1024).
std::optional<uint64_t> parse_size(const std::string& text);

}  // namespace kolo::env

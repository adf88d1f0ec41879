// Invariant checks. A failed check is a bug in Kolo, not bad user input, so
// it throws InternalError with the file, line, condition and values.
#pragma once

#include <fmt/format.h>

#include "common/error.h"

namespace kolo::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition,
                               const std::string& detail);
}  // namespace kolo::detail

#define KOLO_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) ::kolo::detail::check_failed(__FILE__, __LINE__, #cond, ""); \
  } while (0)

// KOLO_CHECK_MSG(n > 0, "n={} size={}", n, size)
#define KOLO_CHECK_MSG(cond, ...)                                                          \
  do {                                                                                     \
    if (!(cond))                                                                           \
      ::kolo::detail::check_failed(__FILE__, __LINE__, #cond, ::fmt::format(__VA_ARGS__)); \
  } while (0)

#define KOLO_CHECK_OP(a, op, b) KOLO_CHECK_MSG((a)op(b), "{} = {}, {} = {}", #a, (a), #b, (b))
#define KOLO_CHECK_EQ(a, b) KOLO_CHECK_OP(a, ==, b)
#define KOLO_CHECK_LE(a, b) KOLO_CHECK_OP(a, <=, b)
#define KOLO_CHECK_LT(a, b) KOLO_CHECK_OP(a, <, b)

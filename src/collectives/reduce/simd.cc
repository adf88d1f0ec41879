// Picks the kernels' level once per process. Compiled with the default
// flags: it must run (and say "portable") on any CPU.
#include "collectives/reduce/simd.h"

#include <fmt/format.h>

#if defined(KOLO_REDUCE_X86)
#include <cpuid.h>
#endif

#include "common/error.h"
#include "common/logging.h"
#include "common/settings/values.h"

namespace kolo::reduce::simd {
namespace {

std::optional<Level> parse_level(std::string_view text) {
  for (Level level : kAllLevels)
    if (text == level_name(level)) return level;
  return std::nullopt;
}

bool cpu_has(Level level) {
#if defined(KOLO_REDUCE_X86)
  // libgcc's and compiler-rt's checks include the OS's: AVX and AVX-512
  // count only where XCR0 says the kernel saves their registers.
  __builtin_cpu_init();
  // F16C from CPUID leaf 1 (Clang before 16 has no "f16c" for the builtin);
  // it uses the AVX registers, whose OS support the avx2 check covers.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && f16c;
  switch (level) {
    case Level::kPortable:
      return true;
    case Level::kAvx2:
      return avx2;
    case Level::kAvx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return false;
#else
  return level == Level::kPortable;
#endif
}

Level best_level() {
  Level best = Level::kPortable;
  for (Level level : kAllLevels)
    if (cpu_supports(level)) best = level;
  return best;
}

}  // namespace

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kPortable:
      return "portable";
    case Level::kAvx2:
      return "avx2";
    case Level::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool cpu_supports(Level level) {
  return cpu_has(level);
}

const Kernels* kernels_for(Level level) {
  if (!cpu_supports(level)) return nullptr;
  switch (level) {
    case Level::kPortable:
      return &portable_kernels();
#if defined(KOLO_REDUCE_X86)
    case Level::kAvx2:
      return &avx2_kernels();
    case Level::kAvx512:
      return &avx512_kernels();
#else
    default:
      break;
#endif
  }
  return nullptr;
}

Level resolve_level(std::optional<std::string_view> request, Level best, std::string* note) {
  note->clear();
  if (!request || request->empty() || *request == "auto") return best;
  const std::optional<Level> asked = parse_level(*request);
  if (!asked) {
    *note = fmt::format("KOLO_SIMD={} is not one of auto, avx512, avx2, portable; using auto ({})",
                        *request, level_name(best));
    return best;
  }
  if (*asked > best) {
    *note = fmt::format("KOLO_SIMD={}: this CPU cannot run those kernels; using {}", *request,
                        level_name(best));
    return best;
  }
  return *asked;
}

Level active_level() {
  // A function-local constant: the CPU and the environment are read once,
  // thread-safely, on the first reduction.
  // Config::FromEnv refuses a bad KOLO_SIMD at init; code that reduces
  // without an engine (tools, tests) gets auto and a warning instead.
  static const Level level = [] {
    std::string request_text;
    try {
      request_text = settings::read_one("KOLO_SIMD");
    } catch (const InvalidArgument& e) {
      KOLO_LOG_WARNING("{}; using auto", e.what());
      request_text = "auto";
    }
    const std::optional<std::string_view> request = request_text;
    std::string note;
    const Level chosen = resolve_level(request, best_level(), &note);
    // A capped request is expected on mixed clusters (one KOLO_SIMD for all
    // hosts), so only debug; an unknown value is a mistake worth a warning.
    if (!note.empty() && request && parse_level(*request))
      KOLO_LOG_DEBUG("{}", note);
    else if (!note.empty())
      KOLO_LOG_WARNING("{}", note);
    KOLO_LOG_DEBUG("reduction kernels: {}", level_name(chosen));
    return chosen;
  }();
  return level;
}

const Kernels& active_kernels() {
  static const Kernels* const kernels = kernels_for(active_level());
  return *kernels;
}

}  // namespace kolo::reduce::simd

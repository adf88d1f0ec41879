// What the parts of the settings table share: ranges, the tri-state
// choice, and the docs/config.md sections the entries are listed under.
#pragma once

#include <string_view>

#include "common/settings/spec.h"

namespace kolo::settings {

using Form = FlagSpec::Form;

inline constexpr double kIntMax = 2147483647.0;
inline constexpr Range kNonNegative{0, kIntMax};
inline constexpr Range kPositive{1, kIntMax};
inline constexpr Range kAboveZero{0, Range{}.max, true};
inline constexpr Range kZeroOrMore{0};
inline constexpr std::string_view kTriState = "auto|1,on,true|0,off,false";

inline constexpr std::string_view kLayout = "Rank layout (set by the launcher)";
inline constexpr std::string_view kRendezvous = "Rendezvous";
inline constexpr std::string_view kTcp = "TCP transport";
inline constexpr std::string_view kShm = "Shared memory";
inline constexpr std::string_view kAlgorithms = "Collective algorithms";
inline constexpr std::string_view kKernels = "Reduction kernels";
inline constexpr std::string_view kEngine = "Engine";
inline constexpr std::string_view kAutotune = "Autotune";
inline constexpr std::string_view kLogging = "Logging";
inline constexpr std::string_view kElastic = "Elastic mode (set by kolorun)";
inline constexpr std::string_view kRun = "Set by kolo.run";

}  // namespace kolo::settings

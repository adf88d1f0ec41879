// kolorun's side of the table: the value a flag or a --config-file key gives
// its setting, checked exactly as a rank will check it, so a value the ranks
// would refuse stops kolorun before anything starts, with the rank's words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/settings/spec.h"

namespace kolo::settings {

// `value` as given to the flag (or the file's key), in the flag's unit, as
// the setting's value for the ranks' environment. `written` names where it
// came from ("--cycle-time-ms", "config file f.yaml: params.cycle_time_ms")
// for the error: "--cycle-time-ms 0: KOLO_CYCLE_TIME='0' must be above 0 and
// at most 10000 milliseconds". Throws InvalidArgument.
std::string value_from_flag(const Spec& spec, std::string_view value, std::string_view written);
// A kSwitch setting's value when its flag is given.
std::string value_from_switch(const Spec& spec);
// A kSwitch setting's value when one of its `off_names` is given: "0" when
// the switch sets "1", else "1".
std::string value_from_off_switch(const Spec& spec);
// A kSwitch setting's value when its --config-file key says `on`: the
// switch's value for true, its opposite for false (flipped for keys that
// say the opposite of the variable, as stall_check.enabled does).
std::string value_from_file_switch(const Spec& spec, bool on);
// The flag's spellings ("--network-interface", "--network-interfaces").
std::vector<std::string_view> flag_names(const Spec& spec);
// A switch's spellings that set the opposite ("--no-hierarchical-allreduce").
std::vector<std::string_view> off_flag_names(const Spec& spec);
// The first clause of the description, for --help.
std::string_view short_description(const Spec& spec);

}  // namespace kolo::settings

// How horovodrun's argparse parser reads an option word, for CLI11: the
// single-dash long options (-np, -cb, -hostfile, -prefix-timestamp) become
// their "--" spellings, and a unique prefix of a long option stands for it
// (argparse's allow_abbrev: --verb is --verbose, -n is -np). Kolo's own
// long options count too, so a prefix is unique among everything kolorun
// takes.
#pragma once

#include <string>
#include <vector>

namespace kolo::runner {

// `arg` as CLI11 should see it: "-np" -> "--num-proc", "-n=4" ->
// "--num-proc=4", "--output-file" -> "--output-filename"; anything else
// unchanged (an unknown option is left for CLI11 to report). `long_names`
// are kolorun's "--" options, `short_names` its one-letter options ("-x").
// Throws InvalidArgument for a prefix of several options:
// "ambiguous option --log: could be --log-level, --log-with-timestamp, ...".
std::string canonical_option(const std::string& arg, const std::vector<std::string>& long_names,
                             const std::vector<std::string>& short_names);

}  // namespace kolo::runner

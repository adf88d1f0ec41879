// Which program starts the ranks, from horovodrun's controller flags
// (--gloo, --mpi, --jsrun), --mpi-args, --binding-args and the config
// file's `controller:`. As in horovodrun: --mpi-args alone means mpirun;
// elastic jobs always use kolorun's own launcher. What this installation
// cannot do (no mpirun, no jsrun) is refused with one line.
#pragma once

#include <string>

#include "runner/cli.h"
#include "runner/cli_app.h"

namespace kolo::runner {

// Fills result.options.mpi (and may add warnings). `controller` is the
// config file's ("gloo", "mpi" or ""); `env` supplies PATH. Throws
// InvalidArgument: "--mpi needs mpirun, which is not in PATH".
void resolve_launcher(const CLI::App& app, const RawFlags& f, const std::string& controller,
                      bool elastic, const Environment& env, CliResult& result);

}  // namespace kolo::runner

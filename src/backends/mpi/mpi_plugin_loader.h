// Finds and loads libkolo_mpi.so at run time (dlopen), so that libkolo never
// links libmpi and one build runs with or without MPI installed.
//
// Where it looks (common/plugin_library.h): `directory` when given (tests point it at an empty
// one); otherwise the directory of the binary that holds this code (dladdr: the folder of
// kolo/_core*.so in a pip install, build/bin for the C++ build's executables) and its sibling lib/
// (build/lib, where CMake puts the plugin). A plugin that is missing, cannot load (libmpi absent:
// dlerror's text) or was built for another ABI version gives no value and the reason in `why_not`.
// The plugin stays loaded for the life of the process (it may have initialised MPI, whose finaliser
// runs at exit).
#pragma once

#include <string>
#include <string_view>

#include "backends/mpi/mpi_plugin.h"

namespace kolo::backends {

// The plugin's object, or nullptr with the reason in *why_not.
MpiPlugin* load_mpi_plugin(std::string_view directory, std::string* why_not);

}  // namespace kolo::backends

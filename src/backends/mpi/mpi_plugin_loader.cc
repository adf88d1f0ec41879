#include "backends/mpi/mpi_plugin_loader.h"

#include <dlfcn.h>

#include "common/plugin_library.h"

namespace kolo::backends {

MpiPlugin* load_mpi_plugin(std::string_view directory, std::string* why_not) {
  // RTLD_GLOBAL: OpenMPI loads its own components with dlopen and they look
  // for libmpi's symbols in the global scope. The plugin exports only its
  // entry point.
  const PluginRequest request{kMpiPluginFileName, kMpiPluginEntryPoint, directory, RTLD_GLOBAL};
  return load_plugin_object<MpiPlugin>(request, kMpiPluginAbiVersion, why_not);
}

}  // namespace kolo::backends

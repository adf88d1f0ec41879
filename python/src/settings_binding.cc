// kolo._core.setting(name): Python reads KOLO_ variables through the same
// registry (common/settings/table.h) as the C++ core, so it gets the same
// defaults, aliases and checks.
#include "settings_binding.h"

#include "common/error.h"
#include "common/settings/values.h"
#include "core/launch/foreign_launcher.h"

namespace kolo::python {

void bind_settings(pybind11::module_& m) {
  m.def(
      "setting",
      [](const std::string& name) {
        try {
          return settings::read_one_named(name);
        } catch (const InvalidArgument& e) {
          throw pybind11::value_error(e.what());
        }
      },
      pybind11::arg("name"),
      "The value of a KOLO_ setting from the environment (its HOROVOD_ alias too), checked; "
      "its default when unset. ValueError for a bad value or an unknown name.");
  m.def(
      "check_settings",
      []() {
        try {
          (void)settings::Values::Read();
        } catch (const InvalidArgument& e) {
          throw pybind11::value_error(e.what());
        }
      },
      "Checks every KOLO_ setting in the environment and the rules between them (the stall "
      "shutdown time against the warning time): ValueError naming the first one that is wrong.");
  m.def(
      "launch_rank",
      []() {
        try {
          return launch::rank_before_init();
        } catch (const InvalidArgument& e) {
          throw pybind11::value_error(e.what());
        }
      },
      "This process's rank as its launcher gives it, before init: KOLO_RANK from kolorun, or "
      "the rank mpirun, srun or torchrun set.");
}

}  // namespace kolo::python

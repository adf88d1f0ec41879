#include "runner/cli_launcher.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "runner/shell_words.h"

namespace kolo::runner {
namespace {

bool given(const CLI::App& app, const char* name) {
  return app.get_option(name)->count() > 0;
}

std::string search_path(const Environment& env) {
  const auto it = env.find("PATH");
  return it == env.end() ? "/usr/bin:/bin" : it->second;
}

// Every interface the user named, for mpirun's btl_tcp_if_include (Kolo's
// own setting, KOLO_IFACE, takes the first).
std::vector<std::string> interfaces(const CLI::App& app) {
  std::vector<std::string> names;
  // One option under both spellings; each value may be a comma-separated list.
  for (const std::string& value : app.get_option("--network-interface")->results()) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = value.find(',', start);
      const std::string name = value.substr(start, comma - start);
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return names;
}

}  // namespace

void resolve_launcher(const CLI::App& app, const RawFlags& f, const std::string& controller,
                      bool elastic, const Environment& env, CliResult& result) {
  const std::string path = search_path(env);
  if (f.use_jsrun) {
    if (!find_program("jsrun", path))
      throw InvalidArgument("--jsrun needs IBM's jsrun, which is not in PATH");
    throw InvalidArgument(
        "--jsrun: Kolo cannot start ranks through jsrun yet; use --mpi or kolorun's own launcher");
  }
  const bool mpi_args = given(app, "--mpi-args");
  // Flags first, then the file; --mpi-args alone asks for mpirun too.
  const bool use_mpi =
      f.use_mpi || (!f.use_gloo && (controller == "mpi" || (controller.empty() && mpi_args)));
  const char* why = f.use_mpi ? "--mpi" : controller == "mpi" ? "controller: mpi" : "--mpi-args";
  if (elastic) {
    if (use_mpi && why != std::string("--mpi-args"))
      throw InvalidArgument(fmt::format(
          "{}: elastic jobs start their workers with kolorun's own launcher, not mpirun "
          "(as horovodrun's do); leave it out",
          why));
    if (mpi_args)
      result.warnings.push_back(
          "--mpi-args: elastic jobs start their workers with kolorun's own launcher; ignored");
    return;
  }
  if (!use_mpi) {
    if (mpi_args)
      result.warnings.push_back("--mpi-args: the ranks are not started by mpirun here; ignored");
    if (given(app, "--binding-args"))
      result.warnings.push_back("--binding-args applies only with --mpi; ignored");
    return;
  }
  MpiOptions& mpi = result.options.mpi;
  const auto mpirun = find_program("mpirun", path);
  if (!mpirun) throw InvalidArgument(fmt::format("{} needs mpirun, which is not in PATH", why));
  mpi.enabled = true;
  mpi.mpirun = *mpirun;
  mpi.extra_args = split_shell_words(f.mpi_args, "--mpi-args");
  mpi.binding_args = split_shell_words(f.binding_args, "--binding-args");
  mpi.network_interfaces = interfaces(app);
}

}  // namespace kolo::runner

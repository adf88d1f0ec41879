// The layering rules of docs/architecture.md that the link graph cannot
// enforce (static libraries resolve symbols late, and every layer sees all of
// src/ on its include path), checked on the includes of the source tree.
//
// A rule: the sources at some paths must not include headers under a
// prefix, except the few it names. Adding a rule is one line in kRules.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "unit/layering/include_scan.h"

namespace kolo::testing {
namespace {

struct IncludeRule {
  std::string_view name;                  // the test's name
  std::vector<std::string_view> paths;    // files or folders under src/
  std::string_view forbidden;             // include prefix those must not use...
  std::vector<std::string_view> allowed;  // ...except these headers
};

// gtest and ctest name a rule's test by this (the default prints its bytes).
void PrintTo(const IncludeRule& rule, std::ostream* out) {
  *out << rule.name;
}

const std::vector<std::string_view> kTransportInterfaces = {"transport/context.h",
                                                            "transport/shared_memory_group.h"};

// Every source of libkolo and kolorun but the GPU plugins' own folders
// (a new file of src/gpu/ goes here too).
const std::vector<std::string_view> kLibkoloOutsideThePlugins = {"common",
                                                                 "rendezvous",
                                                                 "transport",
                                                                 "collectives",
                                                                 "backends",
                                                                 "core",
                                                                 "runner",
                                                                 "gpu/device_runtime.h",
                                                                 "gpu/cuda_plugin.h",
                                                                 "gpu/cuda_plugin_loader.h",
                                                                 "gpu/cuda_plugin_loader.cc",
                                                                 "gpu/nccl_plugin.h",
                                                                 "gpu/nccl_plugin_loader.h",
                                                                 "gpu/nccl_plugin_loader.cc",
                                                                 "gpu/comm_watchdog.h",
                                                                 "gpu/comm_watchdog.cc",
                                                                 "gpu/nccl_id_exchange.h",
                                                                 "gpu/nccl_id_exchange.cc",
                                                                 "gpu/host_staging.h",
                                                                 "gpu/host_staging.cc"};

const std::vector<IncludeRule> kRules = {
    {"CollectivesUseTransportInterfaces", {"collectives"}, "transport/", kTransportInterfaces},
    {"TransportInterfacesUseNoTransport", kTransportInterfaces, "transport/", {}},
    {"BackendInterfaceUsesNoTransport", {"backends/backend.h"}, "transport/", {}},
    {"BackendRegistryUsesNoTransport", {"backends/registry.h"}, "transport/", {}},
    // The engine sees communication only through the backend interface and
    // its registry, which takes the settings and hands each layer its own.
    {"CoreSeesNoTransport", {"core"}, "transport/", {}},
    {"CoreSeesNoCollectives", {"core"}, "collectives/", {}},
    // mpi_runtime.h too: under an MPI launcher across hosts, the rendezvous
    // (core/launch/store_over_mpi.cc) broadcasts rank 0's store address
    // over MPI, which only the backends' plugin can reach.
    {"CoreSeesOnlyTheBackendInterface",
     {"core"},
     "backends/",
     {"backends/backend.h", "backends/registry.h", "backends/mpi_runtime.h"}},
    // kolorun shares only rendezvous/ and common/ with the library.
    {"RunnerSeesNoCore", {"runner"}, "core/", {}},
    {"RunnerSeesNoBackends", {"runner"}, "backends/", {}},
    {"RunnerSeesNoTransport", {"runner"}, "transport/", {}},
    {"RunnerSeesNoCollectives", {"runner"}, "collectives/", {}},
    // The GPU layer sits on common and rendezvous only (the store carries
    // the NCCL ids); backends and core build on it, never the reverse.
    {"GpuSeesNoTransport", {"gpu"}, "transport/", {}},
    {"GpuSeesNoCollectives", {"gpu"}, "collectives/", {}},
    {"GpuSeesNoBackends", {"gpu"}, "backends/", {}},
    {"GpuSeesNoCore", {"gpu"}, "core/", {}},
    // CUDA's and NCCL's headers only inside the plugins (gpu/cuda/,
    // gpu/nccl/), which libkolo never links.
    {"LibkoloSeesNoCuda", kLibkoloOutsideThePlugins, "cuda", {}},
    {"LibkoloSeesNoNccl", kLibkoloOutsideThePlugins, "nccl", {}},
};

bool breaks(const IncludeRule& rule, std::string_view include) {
  if (!include.starts_with(rule.forbidden)) return false;
  for (std::string_view header : rule.allowed) {
    if (include == header) return false;
  }
  return true;
}

// "file: include" for every include of `text` that breaks the rule.
std::vector<std::string> violations(const IncludeRule& rule, std::string_view text,
                                    const std::string& file) {
  std::vector<std::string> found;
  for (const std::string& include : includes_of(text)) {
    if (breaks(rule, include)) found.push_back(file + ": " + include);
  }
  return found;
}

class LayeringTest : public ::testing::TestWithParam<IncludeRule> {};

TEST_P(LayeringTest, SourcesIncludeOnlyWhatTheRuleAllows) {
  const IncludeRule& rule = GetParam();
  const std::filesystem::path root = std::filesystem::path(KOLO_SOURCE_DIR) / "src";
  std::vector<std::string> found;
  for (std::string_view path : rule.paths) {
    const auto files = source_files(root, path);
    // A path that names nothing would make the rule pass vacuously.
    ASSERT_FALSE(files.empty()) << "no sources at " << path << " under " << root;
    for (const auto& file : files) {
      const auto more =
          violations(rule, read_text(file), std::filesystem::relative(file, root).string());
      found.insert(found.end(), more.begin(), more.end());
    }
  }
  EXPECT_TRUE(found.empty()) << "includes against rule " << rule.name << ":\n"
                             << ::testing::PrintToString(found);
}

INSTANTIATE_TEST_SUITE_P(Rules, LayeringTest, ::testing::ValuesIn(kRules),
                         [](const auto& rule) { return std::string(rule.param.name); });

// The checker itself, on text where the answer is known: what the rules above
// would report if someone broke them.
TEST(LayeringCheck, FindsAConcreteHeaderButNotAnAllowedOneNorAMention) {
  const IncludeRule& rule = kRules.front();
  const std::string text =
      "// transport/shm/shm_group.h is not included by this comment\n"
      "#include <vector>\n"
      "#include \"transport/context.h\"\n"
      "  #  include \"transport/shm/shm_group.h\"\n"
      "#include <transport/tcp/tcp_context.h>\n"
      "#include \"collectives/fused_part.h\"\n";
  EXPECT_EQ(violations(rule, text, "x.cc"),
            (std::vector<std::string>{"x.cc: transport/shm/shm_group.h",
                                      "x.cc: transport/tcp/tcp_context.h"}));
}

}  // namespace
}  // namespace kolo::testing

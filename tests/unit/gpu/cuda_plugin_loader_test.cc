// The CUDA and NCCL plugin loaders: the reason a user gets for each way GPU
// support can be missing, and the real plugins where this build has them
// (on a machine without a GPU the CUDA plugin loads and reports no device).
#include "gpu/cuda_plugin_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpu/cuda_plugin.h"
#include "gpu/nccl_id_exchange.h"
#include "gpu/nccl_plugin_loader.h"
#include "rendezvous/memory_store.h"

namespace kolo::gpu {
namespace {

// A directory holding `fake` (a fake plugin target's output) under the
// plugin's file name, so the loader finds it where it looks.
std::string fake_plugin_dir(const std::string& fake, const char* file_name) {
  const std::filesystem::path built =
      std::filesystem::path(KOLO_TEST_FAKE_PLUGINS_DIR) / fake / ("lib" + fake + ".so");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("kolo_gpu_test_" + fake + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(built, dir / file_name,
                             std::filesystem::copy_options::overwrite_existing);
  return dir.string();
}

TEST(CudaPluginLoader, NotBuiltSaysSo) {
  const GpuSupport support = load_cuda_plugin({}, false);
  EXPECT_EQ(support.state, GpuState::kNotBuilt);
  EXPECT_EQ(support.runtime, nullptr);
  EXPECT_NE(support.why_not.find("built without GPU support"), std::string::npos)
      << support.why_not;
}

TEST(CudaPluginLoader, MissingPluginNamesWhereItLooked) {
  const std::string empty = std::filesystem::temp_directory_path().string() + "/kolo-no-plugin";
  const GpuSupport support = load_cuda_plugin(empty, true);
  EXPECT_EQ(support.state, GpuState::kDoesNotLoad);
  EXPECT_EQ(support.why_not, "Kolo's CUDA plugin (libkolo_cuda.so) does not load: " + empty +
                                 "/libkolo_cuda.so does not exist");
}

TEST(CudaPluginLoader, RefusesAPluginOfAnotherBuild) {
  const std::string dir = fake_plugin_dir("kolo_fake_plugin_wrong_abi", kCudaPluginFileName);
  const GpuSupport support = load_cuda_plugin(dir, true);
  EXPECT_EQ(support.state, GpuState::kDoesNotLoad);
  EXPECT_NE(support.why_not.find("was built for another Kolo (plugin ABI version 1 expected)"),
            std::string::npos)
      << support.why_not;
  std::filesystem::remove_all(dir);
}

TEST(CudaPluginLoader, RefusesALibraryWithoutTheEntryPoint) {
  const std::string dir = fake_plugin_dir("kolo_fake_plugin_no_entry", kCudaPluginFileName);
  const GpuSupport support = load_cuda_plugin(dir, true);
  EXPECT_EQ(support.state, GpuState::kDoesNotLoad);
  EXPECT_NE(support.why_not.find("has no kolo_cuda_plugin"), std::string::npos) << support.why_not;
  std::filesystem::remove_all(dir);
}

TEST(CudaPluginLoader, BuiltPluginLoadsAndCountsDevices) {
  if (!KOLO_TEST_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA plugin (no CUDA toolkit)";
  const GpuSupport support = load_cuda_plugin(KOLO_TEST_PLUGIN_DIR, true);
  ASSERT_NE(support.runtime, nullptr) << support.why_not;
  EXPECT_NE(support.runtime->describe().find("CUDA runtime"), std::string::npos);
  if (support.state == GpuState::kNoDevice) {
    // A machine without a GPU (or without its driver): CUDA's own reason.
    EXPECT_EQ(support.devices, 0);
    EXPECT_EQ(support.why_not.rfind("no CUDA device: cudaGetDeviceCount", 0), 0u)
        << support.why_not;
  } else {
    EXPECT_EQ(support.state, GpuState::kReady);
    EXPECT_GT(support.devices, 0);
    EXPECT_TRUE(support.why_not.empty());
  }
}

TEST(CudaPluginLoader, ThisBuildsAnswerMatchesTheBuild) {
  const GpuSupport support = gpu_support();
  if (!KOLO_TEST_HAVE_CUDA) {
    EXPECT_EQ(support.state, GpuState::kNotBuilt);
  } else {
    // Found next to this test binary's ../lib, where CMake puts the plugin.
    EXPECT_NE(support.state, GpuState::kNotBuilt);
    EXPECT_NE(support.state, GpuState::kDoesNotLoad) << support.why_not;
  }
}

TEST(NcclPluginLoader, NotBuiltAndMissingAndWrongAbi) {
  std::string why;
  EXPECT_EQ(load_nccl_plugin({}, false, &why), nullptr);
  EXPECT_NE(why.find("built without NCCL"), std::string::npos) << why;
  EXPECT_EQ(load_nccl_plugin("/nonexistent-kolo-dir", true, &why), nullptr);
  EXPECT_EQ(why,
            "Kolo's NCCL plugin (libkolo_nccl.so) does not load: "
            "/nonexistent-kolo-dir/libkolo_nccl.so does not exist");
  const std::string dir = fake_plugin_dir("kolo_fake_plugin_wrong_abi", kNcclPluginFileName);
  EXPECT_EQ(load_nccl_plugin(dir, true, &why), nullptr);
  EXPECT_NE(why.find("was built for another Kolo"), std::string::npos) << why;
  std::filesystem::remove_all(dir);
}

TEST(NcclPluginLoader, BuiltPluginReportsItsVersion) {
  if (!KOLO_TEST_HAVE_NCCL) GTEST_SKIP() << "this build has no NCCL plugin (NCCL not found)";
  std::string why;
  NcclLibrary* library = load_nccl_plugin(KOLO_TEST_PLUGIN_DIR, true, &why);
  ASSERT_NE(library, nullptr) << why;
  EXPECT_EQ(library->version().rfind("NCCL 2.", 0), 0u) << library->version();
  // ncclGetUniqueId needs no GPU (it only picks the bootstrap address), so
  // the real id goes through the real exchange here.
  const std::string first = library->unique_id();
  EXPECT_EQ(first.size(), kNcclUniqueIdBytes);
  EXPECT_NE(library->unique_id(), first);  // each communicator gets its own
  rendezvous::MemoryStore store;
  const std::string key = nccl_id_key(0, 1);
  EXPECT_EQ(exchange_nccl_id(
                store, key, 0, [&] { return first; }, std::chrono::seconds(1)),
            first);
  EXPECT_EQ(exchange_nccl_id(
                store, key, 1, [] { return std::string(); }, std::chrono::seconds(1)),
            first);
}

}  // namespace
}  // namespace kolo::gpu

// The run-time probes behind kolorun --check-build, on files made here:
// which interpreter is picked for a venv layout, how module imports are
// read, shared memory, and a plugin that is absent, broken or loadable.
#include "runner/build_probes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kolo::runner {
namespace {
namespace fs = std::filesystem;

class BuildProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kolo-build-probes-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path write(const fs::path& relative, const std::string& text, bool exec = false) {
    const fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    if (exec) ::chmod(p.c_str(), 0755);
    return p;
  }

  fs::path root_;
};

TEST_F(BuildProbesTest, PipInstalledKolorunUsesItsPrefixPython) {
  const auto python = write("venv/bin/python3.11", "#!/bin/sh\n", true);
  const auto kolorun = write("venv/lib/python3.11/site-packages/kolo/bin/kolorun", "", true);
  EXPECT_EQ(find_python(kolorun.string(), "/nonexistent"), python.string());
}

TEST_F(BuildProbesTest, KolorunBesideAPythonUsesIt) {
  const auto python = write("bin/python3", "#!/bin/sh\n", true);
  const auto kolorun = write("bin/kolorun", "", true);
  EXPECT_EQ(find_python(kolorun.string(), "/nonexistent"), python.string());
}

TEST_F(BuildProbesTest, OtherwiseThePython3InPath) {
  const auto python = write("path/python3", "#!/bin/sh\n", true);
  const auto kolorun = write("build/bin/kolorun", "", true);
  EXPECT_EQ(find_python(kolorun.string(), (root_ / "path").string()), python.string());
  EXPECT_EQ(find_python(kolorun.string(), "/nonexistent"), std::nullopt);
}

TEST_F(BuildProbesTest, ModulesAreReadFromTheInterpretersAnswers) {
  // A stand-in interpreter that answers as the probe script would.
  const auto fake = write(
      "fake-python", "#!/bin/sh\necho ok kolo\necho no torch ModuleNotFoundError: nope\n", true);
  const PythonModules m =
      probe_python_modules(fake.string(), {"kolo", "torch"}, std::chrono::seconds(10));
  EXPECT_EQ(m.error, "");
  EXPECT_TRUE(m.imports("kolo"));
  EXPECT_FALSE(m.imports("torch"));
  EXPECT_EQ(m.failed.at("torch"), "ModuleNotFoundError: nope");
}

TEST_F(BuildProbesTest, RealPythonImportsSysButNotAMissingModule) {
  const auto python = find_python("/nonexistent/kolorun", "/usr/bin:/bin");
  if (!python) GTEST_SKIP() << "no python3 in /usr/bin or /bin";
  const PythonModules m =
      probe_python_modules(*python, {"sys", "kolo_no_such_module_here"}, std::chrono::seconds(30));
  EXPECT_EQ(m.error, "");
  EXPECT_TRUE(m.imports("sys"));
  ASSERT_TRUE(m.failed.count("kolo_no_such_module_here"));
  EXPECT_NE(m.failed.at("kolo_no_such_module_here").find("ModuleNotFoundError"), std::string::npos);
}

TEST_F(BuildProbesTest, HungInterpreterIsStoppedAtTheLimit) {
  const auto slow = write("slow-python", "#!/bin/sh\nsleep 30\n", true);
  const PythonModules m =
      probe_python_modules(slow.string(), {"kolo"}, std::chrono::milliseconds(200));
  EXPECT_NE(m.error.find("did not finish"), std::string::npos) << m.error;
  EXPECT_FALSE(m.imports("kolo"));
}

TEST_F(BuildProbesTest, SharedMemoryWorksHere) {
  EXPECT_EQ(shared_memory_problem(), "");
}

TEST_F(BuildProbesTest, PluginAbsentBrokenOrLoadable) {
  const auto kolorun = write("build/bin/kolorun", "", true).string();
  EXPECT_EQ(probe_plugin(kolorun, "mpi").state, PluginProbe::State::kNotBuilt);

  write("build/lib/libkolo_mpi.so", "not an ELF file");
  PluginProbe broken = probe_plugin(kolorun, "mpi");
  EXPECT_EQ(broken.state, PluginProbe::State::kBroken);
  EXPECT_EQ(broken.path, (root_ / "build/lib/libkolo_mpi.so").string());
  EXPECT_FALSE(broken.error.empty());

  // Any real shared object loads; the C library's math library is everywhere.
  fs::path libm;
  for (const char* candidate :
       {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6"})
    if (fs::exists(candidate)) libm = candidate;
  if (libm.empty()) GTEST_SKIP() << "no libm.so.6 found to stand in for a plugin";
  // The pip layout: the plugin beside kolo/_core, kolorun in kolo/bin.
  const auto pip_kolorun = write("kolo/bin/kolorun", "", true).string();
  fs::copy_file(libm, root_ / "kolo/libkolo_nccl.so");
  EXPECT_EQ(probe_plugin(pip_kolorun, "nccl").state, PluginProbe::State::kLoads);
}

}  // namespace
}  // namespace kolo::runner

// Without its plugin (a loader pointed at an empty directory), asking for the
// MPI backend fails at once with one message that says why; no MPI needed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "backends/registry.h"
#include "common/error.h"

namespace kolo::backends {
namespace {

std::string temporary_directory() {
  char pattern[] = "/tmp/kolo-mpi-plugin-XXXXXX";
  return mkdtemp(pattern) != nullptr ? pattern : "";
}

// The InvalidArgument message of connecting with the plugin looked for in
// `directory`; "" when it connected.
std::string refusal(const MpiCommunicator& comm, const std::string& directory) {
  try {
    connect_mpi_world(comm, directory);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(MpiPluginAbsent, AskingForMpiNamesThePluginAndWhy) {
  const std::string empty = temporary_directory();
  ASSERT_FALSE(empty.empty());
  const std::string message = refusal({}, empty);
  EXPECT_NE(message.find("KOLO_BACKEND=mpi asks for the MPI backend"), std::string::npos)
      << message;
  EXPECT_NE(message.find(empty + "/libkolo_mpi.so does not exist"), std::string::npos) << message;
  std::filesystem::remove(empty);
}

TEST(MpiPluginAbsent, AnUnloadablePluginGivesTheLoadersError) {
  const std::string dir = temporary_directory();
  ASSERT_FALSE(dir.empty());
  std::FILE* file = std::fopen((dir + "/libkolo_mpi.so").c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("not an ELF file", file);
  std::fclose(file);
  const std::string message = refusal({{0, 1}, nullptr}, dir);
  EXPECT_NE(message.find("init(comm=...) asks for the MPI backend"), std::string::npos) << message;
  // dlerror's own words, which name the file.
  EXPECT_NE(message.find(dir + "/libkolo_mpi.so: "), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kolo::backends

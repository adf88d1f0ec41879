// Host lists and hostfiles as horovodrun users write them, and the mistakes
// they make: each error names the file, line or entry.
#include "runner/hosts.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"

namespace kolo::runner {
namespace {

using Hosts = std::vector<HostSlots>;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HostListTest, ParsesHostsWithAndWithoutSlots) {
  EXPECT_EQ(parse_host_list("host1:4,host2:2"), (Hosts{{"host1", 4}, {"host2", 2}}));
  EXPECT_EQ(parse_host_list("a, b:3"), (Hosts{{"a", 1}, {"b", 3}}));
  EXPECT_EQ(parse_host_list("10.0.0.1:8"), (Hosts{{"10.0.0.1", 8}}));
  EXPECT_EQ(parse_host_list("[fe80::1]:2,user@node-3.example.com:1"),
            (Hosts{{"[fe80::1]", 2}, {"user@node-3.example.com", 1}}));
}

TEST(HostListTest, RejectsMalformedEntries) {
  EXPECT_NE(error_of([] { parse_host_list("a:0"); }).find("slots must be between 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list("a:x"); }).find("slots 'x' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list("a:2,,b"); }).find("empty host entry"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list("a;rm -rf:2"); }).find("is not a host name"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list("-oProxyCommand=x"); }).find("is not a host name"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list("fe80::1:2"); }).find("[addr]:slots"), std::string::npos);
  EXPECT_NE(error_of([] { parse_host_list(""); }).find("no hosts"), std::string::npos);
}

TEST(HostListTest, RejectsDuplicateHosts) {
  EXPECT_NE(error_of([] { parse_host_list("a:2,b:1,a:1"); }).find("host 'a' is listed twice"),
            std::string::npos);
}

TEST(HostfileTest, AcceptsHorovodAndColonFormsWithCommentsAndBlankLines) {
  const std::string text =
      "# our cluster\n"
      "\n"
      "worker-0 slots=4\n"
      "worker-1:2   # the small one\n"
      "  worker-2\n"
      "\tworker-3 slots=1\r\n";
  EXPECT_EQ(parse_hostfile_text(text, "hosts"),
            (Hosts{{"worker-0", 4}, {"worker-1", 2}, {"worker-2", 1}, {"worker-3", 1}}));
}

TEST(HostfileTest, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(error_of([] { parse_hostfile_text("a slots=2\nb slots=two\n", "hosts"); }),
            "hosts:2: slots 'two' is not a number");
  EXPECT_EQ(error_of([] { parse_hostfile_text("a cpus=2\n", "hosts"); }),
            "hosts:1: expected 'slots=N' after the host, got 'cpus=2'");
  EXPECT_EQ(error_of([] { parse_hostfile_text("a slots=2 extra\n", "hosts"); }),
            "hosts:1: expected 'host slots=N', got 'a slots=2 extra'");
  EXPECT_EQ(error_of([] { parse_hostfile_text("a:2 slots=2\n", "hosts"); }),
            "hosts:1: give slots once, as host:N or host slots=N");
  EXPECT_EQ(error_of([] { parse_hostfile_text("# nothing\n\n", "hosts"); }),
            "hosts: no hosts in the hostfile");
  EXPECT_EQ(error_of([] { parse_hostfile_text("a\nb\na slots=3\n", "hosts"); }),
            "hosts: host 'a' is listed twice (give it more slots instead)");
}

TEST(HostfileTest, MissingFileIsAClearError) {
  EXPECT_NE(error_of([] {
              read_hostfile("/nonexistent/run-hostfile");
            }).find("cannot read hostfile '/nonexistent/run-hostfile'"),
            std::string::npos);
}

TEST(HostfileTest, ReadsAFile) {
  std::string path = ::testing::TempDir() + "/run-hostfile-" + std::to_string(::getpid());
  std::ofstream(path) << "h1 slots=2\nh2 slots=3\n";
  EXPECT_EQ(read_hostfile(path), (Hosts{{"h1", 2}, {"h2", 3}}));
  std::remove(path.c_str());
}

TEST(LocalHostTest, LoopbackOwnNamesAndAddressesAreLocal) {
  LocalIdentity id;
  id.names = {"localhost", "node7", "node7.cluster"};
  id.addresses = {"10.1.2.3", "fe80::7"};
  for (const char* h : {"localhost", "127.0.0.1", "127.0.1.1", "[::1]", "node7", "node7.cluster",
                        "10.1.2.3", "[fe80::7]"})
    EXPECT_TRUE(is_local_host(h, id)) << h;
  for (const char* h : {"node8", "10.1.2.4", "user@localhost", "198.18.0.2", "[fe80::8]"})
    EXPECT_FALSE(is_local_host(h, id)) << h;
}

TEST(LocalHostTest, ProbeKnowsLoopbackAndThisHostName) {
  LocalIdentity id = LocalIdentity::probe();
  EXPECT_TRUE(is_local_host("localhost", id));
  EXPECT_TRUE(id.addresses.count("127.0.0.1"));
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  EXPECT_TRUE(is_local_host(name, id));
}

}  // namespace
}  // namespace kolo::runner

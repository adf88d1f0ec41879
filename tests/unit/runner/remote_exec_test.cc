// The request kolorun sends to its remote helper over ssh's stdin, and the
// ssh command line, which must never carry the secret.
#include "runner/remote_exec.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "runner/rank_env.h"
#include "runner/ssh_command.h"

namespace kolo::runner {
namespace {

RemoteRequest sample() {
  RemoteRequest r;
  r.cwd = "/work/dir with space";
  r.argv = {"python", "train.py", "--name=a\nb", ""};
  r.env = {{"KOLO_SECRET", "s3cr3t"}, {"MULTI", "line1\nline2"}, {"EMPTY", ""}};
  r.grace_ms = 1234;
  return r;
}

TEST(RemoteRequestTest, RoundTripsAnyBytes) {
  std::string bytes = encode_remote_request(sample());
  auto decoded = decode_remote_request(bytes + "signal 15\n");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->first, sample());
  EXPECT_EQ(decoded->second, bytes.size());  // control lines after it are left alone
}

TEST(RemoteRequestTest, EveryPrefixIsIncompleteNotAnError) {
  std::string bytes = encode_remote_request(sample());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_remote_request(std::string_view(bytes).substr(0, n)).has_value()) << n;
}

TEST(RemoteRequestTest, RejectsForeignOrBrokenInput) {
  EXPECT_THROW(decode_remote_request("GET / HTTP/1.1\r\n"), InvalidArgument);
  EXPECT_THROW(decode_remote_request("KOLO-REMOTE-EXEC 1\nbogus 3\nabc\ngo\n"), InvalidArgument);
  EXPECT_THROW(decode_remote_request("KOLO-REMOTE-EXEC 1\narg 3\nabcXgo\n"), InvalidArgument);
  EXPECT_THROW(decode_remote_request("KOLO-REMOTE-EXEC 1\narg 99999999999\n"), InvalidArgument);
  EXPECT_THROW(decode_remote_request("KOLO-REMOTE-EXEC 1\ngo\n"), InvalidArgument);  // no program
  EXPECT_THROW(decode_remote_request("KOLO-REMOTE-EXEC 1\narg 1\nx\nenv 3\nabc\ngo\n"),
               InvalidArgument);
}

TEST(SshCommandTest, CarriesOptionsButNoSecretOrEnvironment) {
  SshOptions o;
  o.port = 2222;
  o.identity_file = "/keys/id";
  o.host_key_checking = "yes";
  o.known_hosts_file = "/keys/known";
  o.options = {"ProxyJump=gw"};
  auto argv = ssh_command("/usr/bin/ssh", o, "user@node1", "/opt/kolo's/kolorun");
  std::string joined;
  for (const auto& a : argv) joined += a + " ";
  EXPECT_EQ(argv.front(), "/usr/bin/ssh");
  EXPECT_EQ(argv[1], "-o");
  EXPECT_EQ(argv[2], "ProxyJump=gw");  // first, so it wins over ours
  EXPECT_NE(joined.find("BatchMode=yes"), std::string::npos);
  EXPECT_NE(joined.find("StrictHostKeyChecking=yes"), std::string::npos);
  EXPECT_NE(joined.find("UserKnownHostsFile=/keys/known"), std::string::npos);
  EXPECT_NE(joined.find("-p 2222"), std::string::npos);
  EXPECT_NE(joined.find("-i /keys/id"), std::string::npos);
  EXPECT_EQ(argv[argv.size() - 2], "user@node1");
  EXPECT_EQ(argv.back(), "exec '/opt/kolo'\\''s/kolorun' --internal-remote-exec");
  EXPECT_EQ(joined.find("KOLO_"), std::string::npos);
}

TEST(RankEnvironmentTest, SetsKoloAndHorovodNamesThatNothingOverrides) {
  LaunchOptions o;
  o.extra_env = {{"USER_VAR", "1"}, {"KOLO_RANK", "99"}};
  o.settings = {{"KOLO_CYCLE_TIME", "2"}, {"KOLO_START_TIMEOUT", "45"}, {"KOLO_IFACE", "eth1"}};
  RankSlot slot{"b", 3, 4, 1, 2, 1, 2};
  Environment env = rank_environment({{"PATH", "/bin"}}, slot, {"10.0.0.1", 4242, "abc"}, o);
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["USER_VAR"], "1");
  EXPECT_EQ(env["KOLO_CYCLE_TIME"], "2");
  EXPECT_EQ(env["KOLO_START_TIMEOUT"], "45");
  EXPECT_EQ(env["KOLO_IFACE"], "eth1");
  for (const char* p : {"KOLO_", "HOROVOD_"}) {
    std::string s(p);
    EXPECT_EQ(env[s + "RANK"], "3");
    EXPECT_EQ(env[s + "SIZE"], "4");
    EXPECT_EQ(env[s + "LOCAL_RANK"], "1");
    EXPECT_EQ(env[s + "LOCAL_SIZE"], "2");
    EXPECT_EQ(env[s + "CROSS_RANK"], "1");
    EXPECT_EQ(env[s + "CROSS_SIZE"], "2");
    EXPECT_EQ(env[s + "HOSTNAME"], "b");
  }
  EXPECT_EQ(env["KOLO_RENDEZVOUS_ADDR"], "10.0.0.1");
  EXPECT_EQ(env["KOLO_RENDEZVOUS_PORT"], "4242");
  EXPECT_EQ(env["KOLO_SECRET"], "abc");
}

TEST(RankEnvironmentTest, RemoteRanksDoNotInheritTheLoginSession) {
  Environment env = forwardable_environment({{"PATH", "/x"},
                                             {"HOME", "/root"},
                                             {"SSH_AUTH_SOCK", "/s"},
                                             {"DISPLAY", ":0"},
                                             {"PYTHONPATH", "/p"}});
  EXPECT_EQ(env, (Environment{{"PATH", "/x"}, {"PYTHONPATH", "/p"}}));
}

}  // namespace
}  // namespace kolo::runner

// Config::FromEnv: the TCP streams settings (KOLO_TCP_STREAMS,
// KOLO_TCP_STRIPE_BYTES) and congestion control (KOLO_TCP_CONGESTION), their
// defaults and clear errors for bad values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/error.h"
#include "core/config.h"
#include "transport/tcp/tcp_settings.h"

namespace kolo {
namespace {

struct ScopedVar {
  ScopedVar(const char* name_, const char* value) : name(name_) { ::setenv(name, value, 1); }
  ~ScopedVar() { ::unsetenv(name); }
  const char* name;
};

std::string rejection(const char* name, const char* value) {
  ScopedVar var(name, value);
  try {
    Config::FromEnv();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << name << "=" << value << " was accepted";
  return "";
}

transport::tcp::TcpOptions tcp_from_env() {
  return transport::tcp::tcp_options_from(Config::FromEnv().settings);
}

TEST(ConfigTcp, StreamsDefaultToOne) {
  EXPECT_EQ(tcp_from_env().streams, 1);
  EXPECT_EQ(tcp_from_env().stripe_threshold, 256u << 10);
  const std::string described = Config::FromEnv().Describe();
  EXPECT_NE(
      described.find("KOLO_TCP_STREAMS=1 KOLO_TCP_CONGESTION=auto KOLO_TCP_STRIPE_BYTES=262144"),
      std::string::npos)
      << described;
}

TEST(ConfigTcp, StreamsAndStripeBytesFromTheEnvironment) {
  ScopedVar streams("KOLO_TCP_STREAMS", "4");
  ScopedVar bytes("KOLO_TCP_STRIPE_BYTES", "1M");
  EXPECT_EQ(tcp_from_env().streams, 4);
  EXPECT_EQ(tcp_from_env().stripe_threshold, 1u << 20);
  ScopedVar most("KOLO_TCP_STREAMS", "16");
  EXPECT_EQ(tcp_from_env().streams, 16);
}

TEST(ConfigTcp, TheStallShutdownTimeBoundsHowLongAPeerMayBeSilent) {
  using std::chrono::seconds;
  ScopedVar peer("KOLO_PEER_TIMEOUT_SECONDS", "600");
  EXPECT_EQ(tcp_from_env().peer_timeout, seconds(600));  // no stall shutdown: the peer timeout
  ScopedVar warning("KOLO_STALL_CHECK_TIME_SECONDS", "5");
  ScopedVar shutdown("KOLO_STALL_SHUTDOWN_TIME_SECONDS", "10");
  EXPECT_EQ(tcp_from_env().peer_timeout, seconds(10));
  ScopedVar disabled("KOLO_STALL_CHECK_DISABLE", "1");
  EXPECT_EQ(tcp_from_env().peer_timeout, seconds(600));
}

// Liveness at default settings names a frozen rank within 10 s: 6 s of
// silence, beats every 500 ms; a beat interval above a third of the
// timeout is shortened, so a live peer always beats several times in it.
TEST(ConfigTcp, HeartbeatIntervalAndPeerTimeoutDefaultsAndBound) {
  using std::chrono::milliseconds;
  EXPECT_EQ(tcp_from_env().peer_timeout, milliseconds(6000));
  EXPECT_EQ(tcp_from_env().heartbeat_interval(), milliseconds(500));
  ScopedVar beat("KOLO_HEARTBEAT_INTERVAL", "200");
  EXPECT_EQ(tcp_from_env().heartbeat_interval(), milliseconds(200));
  ScopedVar slow("KOLO_HEARTBEAT_INTERVAL", "5000");
  EXPECT_EQ(tcp_from_env().heartbeat_interval(), milliseconds(2000));  // a third of 6 s
  ScopedVar peer("KOLO_PEER_TIMEOUT_SECONDS", "60");
  EXPECT_EQ(tcp_from_env().heartbeat_interval(), milliseconds(5000));
  EXPECT_NE(rejection("KOLO_HEARTBEAT_INTERVAL", "0").find("KOLO_HEARTBEAT_INTERVAL"),
            std::string::npos);
}

TEST(ConfigTcp, BadValuesNameTheVariable) {
  for (const char* value : {"0", "-2", "17", "many", "2.5"}) {
    std::string what = rejection("KOLO_TCP_STREAMS", value);
    EXPECT_NE(what.find("KOLO_TCP_STREAMS"), std::string::npos) << value << ": " << what;
  }
  EXPECT_NE(rejection("KOLO_TCP_STREAMS", "17").find("between 1 and 16"), std::string::npos);
  for (const char* value : {"lots", "-1", "12Q"}) {
    std::string what = rejection("KOLO_TCP_STRIPE_BYTES", value);
    EXPECT_NE(what.find("KOLO_TCP_STRIPE_BYTES"), std::string::npos) << value << ": " << what;
  }
}

TEST(ConfigTcp, CongestionDefaultsToAutoAndTakesANameOrSystem) {
  EXPECT_EQ(tcp_from_env().congestion, "auto");
  for (const char* value : {"system", "reno", "cubic", "bbr", "my_cc-2"}) {
    ScopedVar var("KOLO_TCP_CONGESTION", value);
    EXPECT_EQ(tcp_from_env().congestion, value);
  }
}

TEST(ConfigTcp, CongestionThatCannotBeANameIsRefused) {
  for (const char* value : {"two words", "cubic;reno", "a-name-of-16-chr"}) {
    std::string what = rejection("KOLO_TCP_CONGESTION", value);
    EXPECT_NE(what.find("KOLO_TCP_CONGESTION='" + std::string(value) + "' is not a name"),
              std::string::npos)
        << value << ": " << what;
  }
}

}  // namespace
}  // namespace kolo

// Config::FromEnv for elastic mode: KOLO_ELASTIC, KOLO_ELASTIC_WORKER and
// KOLO_ELASTIC_TIMEOUT, and the rendezvous variables elastic mode needs.
// Each test sets only the variables it needs and clears them after (ctest
// runs every test in its own process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/config.h"

namespace kolo {
namespace {

using namespace std::chrono_literals;

class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      names_.push_back(name);
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (const auto* name : names_) ::unsetenv(name);
  }

 private:
  std::vector<const char*> names_;
};

// FromEnv must throw InvalidArgument whose message holds every one of `parts`.
void expect_rejected(const std::vector<std::string>& parts) {
  try {
    Config c = Config::FromEnv();
    ADD_FAILURE() << "accepted: elastic=" << c.elastic.enabled << " worker='" << c.elastic.worker_id
                  << "' addr='" << c.rendezvous.address << "' port=" << c.rendezvous.port;
  } catch (const InvalidArgument& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
  }
}

const std::vector<std::string> kElasticNeeds = {"KOLO_ELASTIC=1", "KOLO_ELASTIC_WORKER",
                                                "KOLO_RENDEZVOUS_ADDR", "KOLO_RENDEZVOUS_PORT"};

TEST(ConfigElastic, OffByDefault) {
  Config c = Config::FromEnv();
  EXPECT_FALSE(c.elastic.enabled);
  EXPECT_EQ(c.elastic.worker_id, "");
  EXPECT_EQ(c.elastic.join_timeout, 660s);
}

TEST(ConfigElastic, EnabledAloneNamesTheMissingVariables) {
  ScopedEnv env{{"KOLO_ELASTIC", "1"}};
  expect_rejected(kElasticNeeds);
}

TEST(ConfigElastic, EnabledWithoutWorkerIdIsRejected) {
  ScopedEnv env{{"KOLO_ELASTIC", "1"},
                {"KOLO_RENDEZVOUS_ADDR", "127.0.0.1"},
                {"KOLO_RENDEZVOUS_PORT", "29500"}};
  expect_rejected(kElasticNeeds);
  // An empty value counts as unset.
  ScopedEnv empty{{"KOLO_ELASTIC_WORKER", ""}};
  expect_rejected(kElasticNeeds);
}

TEST(ConfigElastic, EnabledWithoutRendezvousIsRejected) {
  {
    ScopedEnv env{{"KOLO_ELASTIC", "true"}, {"KOLO_ELASTIC_WORKER", "3"}};
    expect_rejected(kElasticNeeds);
  }
  {
    ScopedEnv env{
        {"KOLO_ELASTIC", "1"}, {"KOLO_ELASTIC_WORKER", "3"}, {"KOLO_RENDEZVOUS_PORT", "29500"}};
    expect_rejected(kElasticNeeds);
  }
  {
    ScopedEnv env{
        {"KOLO_ELASTIC", "1"}, {"KOLO_ELASTIC_WORKER", "3"}, {"KOLO_RENDEZVOUS_ADDR", "127.0.0.1"}};
    expect_rejected(kElasticNeeds);
  }
  {
    ScopedEnv env{{"KOLO_ELASTIC", "1"},
                  {"KOLO_ELASTIC_WORKER", "3"},
                  {"KOLO_RENDEZVOUS_ADDR", "127.0.0.1"},
                  {"KOLO_RENDEZVOUS_PORT", "0"}};
    expect_rejected(kElasticNeeds);
  }
}

TEST(ConfigElastic, FullSetIsParsed) {
  ScopedEnv env{{"KOLO_ELASTIC", "1"},
                {"KOLO_ELASTIC_WORKER", "worker-12"},
                {"KOLO_RENDEZVOUS_ADDR", "10.0.0.5"},
                {"KOLO_RENDEZVOUS_PORT", "29500"},
                {"KOLO_ELASTIC_TIMEOUT", "30"}};
  Config c = Config::FromEnv();
  EXPECT_TRUE(c.elastic.enabled);
  EXPECT_EQ(c.elastic.worker_id, "worker-12");
  EXPECT_EQ(c.elastic.join_timeout, 30s);
  EXPECT_EQ(c.rendezvous.address, "10.0.0.5");
  EXPECT_EQ(c.rendezvous.port, 29500);
  // The layout comes from the driver later; the environment gives none.
  EXPECT_EQ(c.layout.size, 1);
}

TEST(ConfigElastic, HorovodRendezvousNamesCount) {
  ScopedEnv env{{"KOLO_ELASTIC", "yes"},
                {"KOLO_ELASTIC_WORKER", "0"},
                {"HOROVOD_GLOO_RENDEZVOUS_ADDR", "127.0.0.1"},
                {"HOROVOD_GLOO_RENDEZVOUS_PORT", "1234"}};
  Config c = Config::FromEnv();
  EXPECT_TRUE(c.elastic.enabled);
  EXPECT_EQ(c.elastic.worker_id, "0");
  EXPECT_EQ(c.rendezvous.port, 1234);
}

TEST(ConfigElastic, TimeoutIsInSeconds) {
  {
    ScopedEnv env{{"KOLO_ELASTIC_TIMEOUT", "2.5"}};
    EXPECT_EQ(Config::FromEnv().elastic.join_timeout, 2500ms);
  }
  {
    ScopedEnv env{{"KOLO_ELASTIC_TIMEOUT", "600"}};
    EXPECT_EQ(Config::FromEnv().elastic.join_timeout, 600s);
  }
  {
    ScopedEnv env{{"KOLO_ELASTIC_TIMEOUT", "0.001"}};
    EXPECT_EQ(Config::FromEnv().elastic.join_timeout, 1ms);
  }
}

TEST(ConfigElastic, BadTimeoutNamesTheVariable) {
  for (const char* bad : {"0", "-5", "soon", "10s", "inf"}) {
    SCOPED_TRACE(bad);
    ScopedEnv env{{"KOLO_ELASTIC_TIMEOUT", bad}};
    expect_rejected({"KOLO_ELASTIC_TIMEOUT"});
  }
}

TEST(ConfigElastic, BadBooleanNamesTheVariable) {
  ScopedEnv env{{"KOLO_ELASTIC", "maybe"}};
  expect_rejected({"KOLO_ELASTIC", "maybe"});
}

TEST(ConfigElastic, DisabledIgnoresTheMissingRendezvous) {
  ScopedEnv env{{"KOLO_ELASTIC", "0"}, {"KOLO_ELASTIC_WORKER", "4"}};
  Config c = Config::FromEnv();
  EXPECT_FALSE(c.elastic.enabled);
  EXPECT_EQ(c.elastic.worker_id, "4");  // read, but unused while disabled
}

}  // namespace
}  // namespace kolo

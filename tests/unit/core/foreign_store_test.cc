// connect_foreign_store and complete_foreign_layout: ranks as threads of
// one process, as a foreign launcher would start them on one host. Rank 0
// hosts the store and leaves its address in a private file; the others find
// it (also past a stale file from an earlier job) and learn their local and
// cross layout from the machines.
#include "core/launch/foreign_store.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "common/error.h"
#include "core/launch/host_layout.h"
#include "core/launch/rendezvous_file.h"
#include "core/launch/store_over_mpi.h"

namespace kolo::launch {
namespace {

namespace fs = std::filesystem;

class ForeignStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("kolo-foreign-store-{}", ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Config config_for(int rank, int size, ForeignLauncher launcher, const char* timeout = "10") {
    settings::Values values;
    values.set("KOLO_RANK", std::to_string(rank));
    values.set("KOLO_SIZE", std::to_string(size));
    values.set("KOLO_RENDEZVOUS_DIR", dir_.string());
    values.set("KOLO_START_TIMEOUT", timeout);
    launcher.rank = rank;
    launcher.size = size;
    return Config::FromSettings(values, launcher);
  }

  static ForeignLauncher one_host_launcher(int size) {
    ForeignLauncher l;
    l.name = "a test launcher";
    l.local_size = size;
    l.job_key = "test-job";
    return l;
  }

  // Runs `body` as every rank at once; returns each rank's result.
  template <typename T>
  std::vector<T> as_ranks(int size, const std::function<T(int)>& body) {
    std::vector<std::future<T>> futures;
    for (int r = 0; r < size; ++r) futures.push_back(std::async(std::launch::async, body, r));
    std::vector<T> results;
    for (auto& f : futures) results.push_back(f.get());
    return results;
  }

  fs::path dir_;
};

using Joined = std::pair<RankLayout, std::shared_ptr<rendezvous::Store>>;

// Every rank connects and completes its layout; the stores stay open until
// all ranks are done (rank 0's hosts the others').
std::function<Joined(int)> join_as(int size, std::function<Config(int)> make_config) {
  return [size, make_config](int rank) {
    Config config = make_config(rank);
    auto store = connect_foreign_store(config);
    complete_foreign_layout(*store, config);
    store->add("met", 1);
    std::vector<std::string> keys;
    store->set(fmt::format("done/{}", rank), rendezvous::to_bytes("1"));
    for (int r = 0; r < size; ++r) keys.push_back(fmt::format("done/{}", r));
    store->wait(keys, std::chrono::seconds(10));
    return Joined{config.layout, store};
  };
}

TEST_F(ForeignStoreTest, RanksOnOneHostMeetThroughRankZerosFileAndLearnTheirLayout) {
  const int size = 3;
  const auto joined = as_ranks<Joined>(size, join_as(size, [&](int rank) {
                                         ForeignLauncher l = one_host_launcher(size);
                                         l.local_rank = rank;
                                         return config_for(rank, size, l);
                                       }));
  for (int r = 0; r < size; ++r) {
    const RankLayout& layout = joined[r].first;
    EXPECT_EQ(layout.rank, r);
    EXPECT_EQ(layout.local_rank, r);
    EXPECT_EQ(layout.local_size, size);
    EXPECT_EQ(layout.cross_rank, 0);
    EXPECT_EQ(layout.cross_size, 1);
  }
  EXPECT_EQ(rendezvous::to_string(*joined[1].second->get("met")), "3");
  const fs::path file = dir_ / fmt::format("kolo-{}", ::getuid()) / "test-job.rendezvous";
  EXPECT_TRUE(fs::exists(file)) << "rank 0's store is still open";
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(file.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(ForeignStoreTest, RankZeroRemovesItsFileWhenItsStoreCloses) {
  auto joined = as_ranks<Joined>(2, join_as(2, [&](int rank) {
                                   ForeignLauncher l = one_host_launcher(2);
                                   l.local_rank = rank;
                                   return config_for(rank, 2, l);
                                 }));
  const fs::path file = dir_ / fmt::format("kolo-{}", ::getuid()) / "test-job.rendezvous";
  ASSERT_TRUE(fs::exists(file));
  joined.clear();
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(ForeignStoreTest, AStaleFileFromAnEarlierJobIsReadAgainUntilRankZeroReplacesIt) {
  RendezvousFile stale(dir_, "test-job");
  stale.publish({"127.0.0.1", 1, "an-old-secret"});  // nothing listens on port 1
  const auto joined =
      as_ranks<Joined>(2, join_as(2, [&](int rank) {
                         if (rank == 0)  // the others read the stale file first
                           std::this_thread::sleep_for(std::chrono::milliseconds(300));
                         ForeignLauncher l = one_host_launcher(2);
                         l.local_rank = rank;
                         return config_for(rank, 2, l);
                       }));
  EXPECT_EQ(joined[1].first.local_size, 2);
}

TEST_F(ForeignStoreTest, WithoutRankZeroTheOthersTimeOutNamingTheFile) {
  ForeignLauncher l = one_host_launcher(2);
  l.local_rank = 1;
  Config config = config_for(1, 2, l, "0.3");
  try {
    connect_foreign_store(config);
    FAIL() << "found a store nobody hosts";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("did not find rank 0's rendezvous store"), std::string::npos) << what;
    EXPECT_NE(what.find("test-job.rendezvous"), std::string::npos) << what;
    EXPECT_NE(what.find("a test launcher"), std::string::npos) << what;
  }
}

TEST_F(ForeignStoreTest, ADirectoryOthersCanUseIsRefused) {
  const fs::path mine = dir_ / fmt::format("kolo-{}", ::getuid());
  fs::create_directories(mine);
  ::chmod(mine.c_str(), 0777);
  try {
    RendezvousFile file(dir_, "test-job");
    FAIL() << "accepted a world-writable rendezvous directory";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("only its owner can use"), std::string::npos) << e.what();
  }
}

TEST_F(ForeignStoreTest, LocalRanksThatContradictTheMachinesFailTheJob) {
  EXPECT_THROW(as_ranks<Joined>(2, join_as(2,
                                           [&](int rank) {
                                             ForeignLauncher l = one_host_launcher(2);
                                             l.local_rank = 1 - rank;  // reversed
                                             return config_for(rank, 2, l);
                                           })),
               InvalidArgument);
}

// A port nothing listens on now (the kernel's next ephemeral one).
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST_F(ForeignStoreTest, AcrossHostsRanksMeetAtTheLaunchersRankZeroHostWithTheUsersSecret) {
  // torchrun's MASTER_ADDR (or a Slurm step's first node) and a port: rank 0
  // listens there, the others connect with KOLO_SECRET; no file is written.
  const uint16_t port = free_port();
  const auto stores = as_ranks<std::shared_ptr<rendezvous::Store>>(3, [&](int rank) {
    ForeignLauncher l;
    l.name = "torchrun";
    l.local_size = 1;  // one rank per host, as far as the launcher says
    l.rank0_host = "127.0.0.1";
    l.port_hint = port;
    Config config = config_for(rank, 3, l);
    config.rendezvous.secret = "the-users-secret";
    auto store = connect_foreign_store(config);
    store->set(fmt::format("here/{}", rank), rendezvous::to_bytes("1"));
    store->wait({"here/0", "here/1", "here/2"}, std::chrono::seconds(10));
    return store;
  });
  EXPECT_TRUE(stores[2]->get("here/0").has_value());
  EXPECT_FALSE(fs::exists(dir_ / fmt::format("kolo-{}", ::getuid()))) << "no file across hosts";
}

TEST_F(ForeignStoreTest, AcrossHostsWithoutASecretOrAPlaceToMeetIsRefused) {
  ForeignLauncher l;
  l.name = "torchrun";
  l.local_size = 1;
  l.rank0_host = "node-a";
  l.port_hint = 29501;
  try {
    Config config = config_for(1, 2, l);
    connect_foreign_store(config);
    FAIL() << "started across hosts without a secret";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("KOLO_SECRET"), std::string::npos) << e.what();
  }
  l.rank0_host.clear();
  l.port_hint = 0;
  l.name = "mpirun (OpenMPI)";
  l.mpi_launched = true;
  try {
    // This process was not started by mpirun: MPI cannot carry the
    // rendezvous, and the error says why.
    Config config = config_for(1, 2, l);
    connect_foreign_store(config);
    FAIL() << "started across hosts with nowhere to meet";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kolorun"), std::string::npos) << what;
    EXPECT_NE(what.find("(MPI could not carry it: this process's environment names no MPI "
                        "launcher)"),
              std::string::npos)
        << what;
  }
}

// Across hosts under an MPI launcher, rank 0's offer travels over MPI
// (store_over_mpi.h); here the ranks are threads and the offer goes through
// its text form, as MPI would carry it.
class StoreOfferTest : public ForeignStoreTest {
 protected:
  Config across_hosts(int rank, int size, const std::string& secret = "") {
    ForeignLauncher l;
    l.name = "mpirun (OpenMPI)";
    l.local_size = 1;
    l.mpi_launched = true;
    Config config = config_for(rank, size, l);
    config.rendezvous.secret = secret;
    return config;
  }
};

TEST_F(StoreOfferTest, TheOthersSkipAnAddressThatDoesNotAnswerAndMeetAtTheNext) {
  const int size = 3;
  // TEST-NET-3 is never routed: the first address cannot answer.
  OfferedStore offered = offer_store(across_hosts(0, size), {"203.0.113.1", "127.0.0.1"});
  EXPECT_EQ(offered.offer.secret.size(), 64u) << "a fresh 256-bit secret travels with the offer";
  EXPECT_NE(offered.offer.port, 0);
  const StoreOffer received = decode_offer(encode_offer(offered.offer));
  const auto stores = as_ranks<std::shared_ptr<rendezvous::Store>>(size - 1, [&](int r) {
    auto store = connect_to_offer(across_hosts(r + 1, size), received);
    store->add("met", 1);
    return store;
  });
  EXPECT_EQ(rendezvous::to_string(*offered.store->get("met")), "2");
  EXPECT_FALSE(fs::exists(dir_ / fmt::format("kolo-{}", ::getuid()))) << "no file across hosts";
}

TEST_F(StoreOfferTest, TheUsersSecretAndPortWinAndTheSecretDoesNotTravel) {
  const uint16_t port = free_port();
  Config rank0 = across_hosts(0, 2, "the-users-secret");
  rank0.rendezvous.port = port;
  OfferedStore offered = offer_store(rank0, {"127.0.0.1"});
  EXPECT_EQ(offered.offer.port, port);
  EXPECT_EQ(offered.offer.secret, "");
  auto store = connect_to_offer(across_hosts(1, 2, "the-users-secret"), offered.offer);
  store->set("k", rendezvous::to_bytes("v"));
  EXPECT_EQ(rendezvous::to_string(*offered.store->get("k")), "v");
  try {
    connect_to_offer(across_hosts(1, 2), offered.offer);
    FAIL() << "a rank without the user's secret connected";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 has none"), std::string::npos) << e.what();
  }
}

TEST_F(StoreOfferTest, RankZerosFailureReachesTheOthers) {
  StoreOffer failed;
  failed.error = "rank 0 could not host the job's rendezvous store on 0.0.0.0:1 (denied)";
  try {
    connect_to_offer(across_hosts(1, 2), failed);
    FAIL() << "connected to a store rank 0 could not host";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("0.0.0.0:1 (denied)"), std::string::npos) << e.what();
  }
}

TEST_F(StoreOfferTest, NoAddressAnsweringNamesEveryAddressTried) {
  const uint16_t port = free_port();  // nothing listens there
  Config config = across_hosts(1, 2);
  config.rendezvous.timeout = std::chrono::milliseconds(300);
  try {
    connect_to_offer(config, StoreOffer{{"127.0.0.1", "127.0.0.2"}, port, "s", ""});
    FAIL() << "connected to nothing";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 of 2 (started by mpirun (OpenMPI)) reached none"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(fmt::format("127.0.0.1:{}", port)), std::string::npos) << what;
    EXPECT_NE(what.find(fmt::format("127.0.0.2:{}", port)), std::string::npos) << what;
    EXPECT_NE(what.find("KOLO_IFACE"), std::string::npos) << what;
  }
}

TEST_F(StoreOfferTest, RanksOfOneMachineOnNodesTheLauncherTellsApartAreOnTwoHosts) {
  // Network namespaces or containers share the host name and the boot: the
  // launcher's node (OpenMPI's daemon) still tells the hosts apart.
  std::promise<StoreOffer> offer_made;
  std::shared_future<StoreOffer> offer = offer_made.get_future().share();
  std::vector<std::string> mesh_address(4);
  // Each rank's store outlives every rank's last call (rank 0's hosts them).
  const auto joined = as_ranks<Joined>(4, [&](int rank) {
    Config config = across_hosts(rank, 4);
    config.foreign_launcher->local_size = 2;
    config.foreign_launcher->local_rank = rank % 2;
    config.foreign_launcher->node_key = fmt::format("ompi-daemon-7.{}", rank / 2);
    std::shared_ptr<rendezvous::Store> store;
    if (rank == 0) {
      OfferedStore offered = offer_store(config, {"127.0.0.1"});
      offer_made.set_value(offered.offer);
      store = offered.store;
    } else {
      store = connect_to_offer(config, offer.get(), &config.rendezvous.reached_rank0_at);
      EXPECT_EQ(config.rendezvous.reached_rank0_at, "127.0.0.1");
    }
    complete_foreign_layout(*store, config);
    mesh_address[static_cast<size_t>(rank)] = config.settings.text("KOLO_ADDRESS");
    store->set(fmt::format("done/{}", rank), rendezvous::to_bytes("1"));
    store->wait({"done/0", "done/1", "done/2", "done/3"}, std::chrono::seconds(10));
    return Joined{config.layout, store};
  });
  for (int r = 0; r < 4; ++r) {
    const RankLayout& layout = joined[r].first;
    EXPECT_EQ(layout.local_rank, r % 2);
    EXPECT_EQ(layout.local_size, 2);
    EXPECT_EQ(layout.cross_rank, r / 2);
    EXPECT_EQ(layout.cross_size, 2);
    // The network on which the other host reached rank 0 carries the mesh.
    EXPECT_EQ(mesh_address[static_cast<size_t>(r)], "127.0.0.1") << "rank " << r;
  }
}

}  // namespace
}  // namespace kolo::launch

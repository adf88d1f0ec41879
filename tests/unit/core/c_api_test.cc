// The C API (include/kolo/c_api.h): its default engine's lifecycle, every
// collective on a size-1 job, errors as codes plus text, unknown handles;
// and a real 2-rank job where rank 0 is the C API (configured by the
// environment, as a launcher would) and rank 1 a kolo::Engine thread, both
// meeting in a TCP rendezvous server.
#include "kolo/c_api.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/public_engine_internal.h"
#include "rendezvous/tcp_store_server.h"
#include "support/tcp_mesh.h"

extern "C" int kolo_c_smoke(char* message, size_t capacity);  // c_api_smoke.c

namespace kolo {
namespace {

using namespace std::chrono_literals;

bool contains(const char* text, const std::string& needle) {
  return text != nullptr && std::string(text).find(needle) != std::string::npos;
}

// Sets environment variables for one test and restores them after. Only
// touched while no other thread of the test reads the environment.
class ScopedEnv {
 public:
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Every test starts and ends without a default engine.
class CApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(kolo_is_initialized(), 0); }
  void TearDown() override { EXPECT_EQ(kolo_shutdown(), KOLO_OK) << kolo_last_error(); }
};

kolo_tensor tensor(const char* name, const void* input, void* output, kolo_dtype dtype,
                   const std::vector<int64_t>& shape) {
  return kolo_tensor{name,
                     input,
                     output,
                     static_cast<int32_t>(dtype),
                     static_cast<int32_t>(shape.size()),
                     shape.data(),
                     KOLO_CPU_DEVICE};
}

template <class T>
std::vector<T> output_of(kolo_handle h) {
  const T* data = static_cast<const T*>(kolo_handle_data(h));
  if (data == nullptr) return {};
  return std::vector<T>(data, data + kolo_handle_nbytes(h) / static_cast<int64_t>(sizeof(T)));
}

std::vector<int64_t> shape_of(kolo_handle h) {
  const int64_t* shape = kolo_handle_shape(h);
  if (shape == nullptr) return {};
  return std::vector<int64_t>(shape, shape + kolo_handle_ndim(h));
}

TEST_F(CApi, CallsBeforeInitFailClearly) {
  EXPECT_EQ(kolo_rank(), -1);
  EXPECT_TRUE(contains(kolo_last_error(), "not initialized; call kolo_init()"))
      << kolo_last_error();
  EXPECT_EQ(kolo_size(), -1);
  EXPECT_EQ(kolo_local_rank(), -1);
  EXPECT_EQ(kolo_local_size(), -1);
  EXPECT_EQ(kolo_cross_rank(), -1);
  EXPECT_EQ(kolo_cross_size(), -1);
  float x = 1;
  std::vector<int64_t> shape{1};
  kolo_tensor t = tensor("x", &x, &x, KOLO_FLOAT32, shape);
  EXPECT_EQ(kolo_allreduce(&t, KOLO_SUM, 1, 1, 0), -KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(kolo_barrier(0), -KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(kolo_join(0), -KOLO_INVALID_ARGUMENT);
  int ranks[1] = {0};
  EXPECT_EQ(kolo_add_process_set(ranks, 1), -KOLO_INVALID_ARGUMENT);
  kolo_handle group[2] = {99, 99};
  EXPECT_EQ(kolo_grouped_allgather(&t, 1, 0, "g", group), KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(group[0], -KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(kolo_start_timeline("/tmp/capi-never.json", 0), KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(kolo_stop_timeline(), KOLO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kolo_last_error(), "not initialized")) << kolo_last_error();
  int sizes[1] = {1};
  EXPECT_EQ(kolo_init_with_process_sets(nullptr, sizes, 1), KOLO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kolo_last_error(), "ranks is NULL")) << kolo_last_error();
  EXPECT_EQ(kolo_is_initialized(), 0);
  EXPECT_EQ(kolo_shutdown(), KOLO_OK);  // nothing to shut down is fine
}

TEST_F(CApi, InitShutdownInitThreeTimes) {
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(kolo_init(), KOLO_OK) << kolo_last_error();
    EXPECT_EQ(kolo_is_initialized(), 1);
    EXPECT_EQ(kolo_rank(), 0);
    EXPECT_EQ(kolo_size(), 1);
    EXPECT_EQ(kolo_local_rank(), 0);
    EXPECT_EQ(kolo_local_size(), 1);
    EXPECT_EQ(kolo_cross_rank(), 0);
    EXPECT_EQ(kolo_cross_size(), 1);
    EXPECT_EQ(kolo_init(), KOLO_OK);  // already initialized: nothing happens
    int ranks[1] = {0}, sizes[1] = {1};
    EXPECT_EQ(kolo_init_with_process_sets(ranks, sizes, 1), KOLO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(kolo_last_error(), "already initialized")) << kolo_last_error();

    std::vector<int32_t> in{round, 7};
    std::vector<int64_t> shape{2};
    kolo_tensor t = tensor("gathered", in.data(), nullptr, KOLO_INT32, shape);
    kolo_handle h = kolo_allgather(&t, 0);
    ASSERT_GT(h, 0) << kolo_last_error();
    ASSERT_EQ(kolo_wait(h, 30), KOLO_OK) << kolo_handle_error(h);
    ASSERT_EQ(kolo_shutdown(), KOLO_OK) << kolo_last_error();
    EXPECT_EQ(kolo_is_initialized(), 0);
    EXPECT_EQ(kolo_size(), -1);
    // A finished handle outlives the engine until it is released.
    EXPECT_EQ(output_of<int32_t>(h), in);
    EXPECT_EQ(kolo_release(h), KOLO_OK);
  }
}

TEST_F(CApi, InitReportsABadEnvironmentAndCanBeRetried) {
  {
    ScopedEnv env;
    env.set("KOLO_SIZE", "2");
    EXPECT_EQ(kolo_init(), KOLO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(kolo_last_error(), "KOLO_SIZE=2 needs a rendezvous server"))
        << kolo_last_error();
    EXPECT_EQ(kolo_is_initialized(), 0);
  }
  {
    ScopedEnv env;
    env.set("KOLO_CYCLE_TIME", "-3");
    EXPECT_EQ(kolo_init(), KOLO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(kolo_last_error(), "KOLO_CYCLE_TIME")) << kolo_last_error();
  }
  ASSERT_EQ(kolo_init(), KOLO_OK) << kolo_last_error();
  EXPECT_EQ(kolo_size(), 1);
}

TEST_F(CApi, EveryCollectiveOnSizeOne) {
  ASSERT_EQ(kolo_init(), KOLO_OK) << kolo_last_error();
  std::vector<float> in{1, 2, 3}, out(3);
  std::vector<int64_t> shape3{3};
  kolo_tensor t = tensor("avg", in.data(), out.data(), KOLO_FLOAT32, shape3);
  kolo_handle h = kolo_allreduce(&t, KOLO_AVERAGE, 2.0, 3.0, 0);
  ASSERT_GT(h, 0) << kolo_last_error();
  ASSERT_EQ(kolo_wait(h, 30), KOLO_OK) << kolo_handle_error(h);
  EXPECT_EQ(out, (std::vector<float>{6, 12, 18}));
  EXPECT_EQ(kolo_poll(h), 1);
  EXPECT_EQ(kolo_handle_status(h), KOLO_OK);
  EXPECT_STREQ(kolo_handle_error(h), "");
  EXPECT_EQ(kolo_handle_data(h), nullptr);  // the output was the caller's
  EXPECT_EQ(kolo_release(h), KOLO_OK);

  // Grouped allreduce: two int64 tensors, in place.
  std::vector<int64_t> a{5, -1}, b{9}, shape2{2}, shape1{1};
  kolo_tensor pair[2] = {tensor(nullptr, a.data(), a.data(), KOLO_INT64, shape2),
                         tensor(nullptr, b.data(), b.data(), KOLO_INT64, shape1)};
  kolo_handle handles[2] = {0, 0};
  ASSERT_EQ(kolo_grouped_allreduce(pair, 2, KOLO_MAX, 1, 1, 0, "gmax", handles), KOLO_OK)
      << kolo_last_error();
  for (kolo_handle g : handles) ASSERT_EQ(kolo_wait(g, 30), KOLO_OK) << kolo_handle_error(g);
  EXPECT_EQ(a, (std::vector<int64_t>{5, -1}));
  EXPECT_EQ(b, (std::vector<int64_t>{9}));

  // Allgather of a 2x2 tensor and a grouped pair.
  std::vector<int32_t> m{1, 2, 3, 4};
  std::vector<int64_t> shape22{2, 2};
  kolo_tensor mt = tensor("m", m.data(), nullptr, KOLO_INT32, shape22);
  kolo_handle ag = kolo_allgather(&mt, 0);
  ASSERT_EQ(kolo_wait(ag, 30), KOLO_OK) << kolo_handle_error(ag);
  EXPECT_EQ(output_of<int32_t>(ag), m);
  EXPECT_EQ(kolo_handle_ndim(ag), 2);
  EXPECT_EQ(shape_of(ag), shape22);
  EXPECT_EQ(kolo_handle_nbytes(ag), 16);
  std::vector<int64_t> shape4{4};
  kolo_tensor gather_pair[2] = {tensor(nullptr, m.data(), nullptr, KOLO_INT32, shape22),
                                tensor(nullptr, m.data(), nullptr, KOLO_INT32, shape4)};
  ASSERT_EQ(kolo_grouped_allgather(gather_pair, 2, 0, "gag", handles), KOLO_OK)
      << kolo_last_error();
  for (kolo_handle g : handles) ASSERT_EQ(kolo_wait(g, 30), KOLO_OK) << kolo_handle_error(g);
  EXPECT_EQ(output_of<int32_t>(handles[1]), m);

  // Broadcast into a separate output.
  std::vector<double> src{3.5, -2}, dst(2);
  std::vector<int64_t> shape_b{2};
  kolo_tensor bt = tensor("bc", src.data(), dst.data(), KOLO_FLOAT64, shape_b);
  kolo_handle bc = kolo_broadcast(&bt, 0, 0);
  ASSERT_EQ(kolo_wait(bc, 30), KOLO_OK) << kolo_handle_error(bc);
  EXPECT_EQ(dst, src);

  // Alltoall with explicit and with equal splits.
  int64_t splits[1] = {3};
  kolo_tensor at = tensor("a2a", in.data(), nullptr, KOLO_FLOAT32, shape3);
  kolo_handle a2a = kolo_alltoall(&at, splits, 1, 0);
  ASSERT_EQ(kolo_wait(a2a, 30), KOLO_OK) << kolo_handle_error(a2a);
  EXPECT_EQ(output_of<float>(a2a), in);
  ASSERT_EQ(kolo_handle_num_received_splits(a2a), 1);
  EXPECT_EQ(kolo_handle_received_splits(a2a)[0], 3);
  at.name = "a2a.equal";
  kolo_handle equal = kolo_alltoall(&at, nullptr, 0, 0);
  ASSERT_EQ(kolo_wait(equal, 30), KOLO_OK) << kolo_handle_error(equal);
  EXPECT_EQ(output_of<float>(equal), in);

  // Reducescatter, single and grouped.
  kolo_tensor rt = tensor("rs", in.data(), nullptr, KOLO_FLOAT32, shape3);
  kolo_handle rs = kolo_reducescatter(&rt, KOLO_SUM, 1, 2, 0);
  ASSERT_EQ(kolo_wait(rs, 30), KOLO_OK) << kolo_handle_error(rs);
  EXPECT_EQ(output_of<float>(rs), (std::vector<float>{2, 4, 6}));
  kolo_tensor scatter_pair[2] = {tensor(nullptr, in.data(), nullptr, KOLO_FLOAT32, shape3),
                                 tensor(nullptr, in.data(), nullptr, KOLO_FLOAT32, shape3)};
  ASSERT_EQ(kolo_grouped_reducescatter(scatter_pair, 2, KOLO_SUM, 1, 1, 0, "grs", handles), KOLO_OK)
      << kolo_last_error();
  for (kolo_handle g : handles) ASSERT_EQ(kolo_wait(g, 30), KOLO_OK) << kolo_handle_error(g);
  EXPECT_EQ(output_of<float>(handles[0]), in);

  kolo_handle barrier = kolo_barrier(0);
  ASSERT_EQ(kolo_wait(barrier, 30), KOLO_OK) << kolo_handle_error(barrier);
  kolo_handle join = kolo_join(0);
  ASSERT_EQ(kolo_wait(join, 30), KOLO_OK) << kolo_handle_error(join);
  EXPECT_EQ(kolo_handle_value(join), 0);

  // A process set added at run time, used, then removed.
  int ranks[1] = {0};
  kolo_handle add = kolo_add_process_set(ranks, 1);
  ASSERT_EQ(kolo_wait(add, 30), KOLO_OK) << kolo_handle_error(add);
  int set = static_cast<int>(kolo_handle_value(add));
  EXPECT_GE(set, 1);
  t.name = "in_set";
  kolo_handle in_set = kolo_allreduce(&t, KOLO_SUM, 1, 1, set);
  ASSERT_EQ(kolo_wait(in_set, 30), KOLO_OK) << kolo_handle_error(in_set);
  EXPECT_EQ(out, in);
  kolo_handle remove = kolo_remove_process_set(set);
  ASSERT_EQ(kolo_wait(remove, 30), KOLO_OK) << kolo_handle_error(remove);
  EXPECT_LT(kolo_allreduce(&t, KOLO_SUM, 1, 1, set), 0);
  EXPECT_TRUE(contains(kolo_last_error(), "does not exist")) << kolo_last_error();

  auto path = std::filesystem::path(::testing::TempDir()) / "capi-c-timeline.json";
  std::filesystem::remove(path);
  ASSERT_EQ(kolo_start_timeline(path.c_str(), 1), KOLO_OK) << kolo_last_error();
  t.name = "traced";
  kolo_handle traced = kolo_allreduce(&t, KOLO_SUM, 1, 1, 0);
  ASSERT_EQ(kolo_wait(traced, 30), KOLO_OK) << kolo_handle_error(traced);
  ASSERT_EQ(kolo_stop_timeline(), KOLO_OK) << kolo_last_error();
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
}

TEST_F(CApi, InitWithProcessSets) {
  int ranks[2] = {0, 0}, sizes[2] = {1, 1};
  ASSERT_EQ(kolo_init_with_process_sets(ranks, sizes, 2), KOLO_OK) << kolo_last_error();
  float x = 4, y = 0;
  std::vector<int64_t> shape{1};
  kolo_tensor t = tensor("s2", &x, &y, KOLO_FLOAT32, shape);
  kolo_handle h = kolo_allreduce(&t, KOLO_SUM, 1, 1, 2);
  ASSERT_EQ(kolo_wait(h, 30), KOLO_OK) << kolo_handle_error(h);
  EXPECT_EQ(y, 4);
  EXPECT_EQ(kolo_allreduce(&t, KOLO_SUM, 1, 1, 3), -KOLO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kolo_last_error(), "process set 3 does not exist")) << kolo_last_error();
}

TEST_F(CApi, BadArgumentsReturnCodesAndText) {
  ASSERT_EQ(kolo_init(), KOLO_OK) << kolo_last_error();
  std::vector<float> v{1, 2};
  std::vector<int64_t> shape{2};
  kolo_tensor t = tensor("bad", v.data(), v.data(), KOLO_FLOAT32, shape);
  auto expect_refused = [](kolo_handle h, const std::string& needle) {
    EXPECT_EQ(h, -KOLO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(kolo_last_error(), needle))
        << "'" << kolo_last_error() << "' lacks '" << needle << "'";
  };
  expect_refused(kolo_allreduce(nullptr, KOLO_SUM, 1, 1, 0), "tensor is NULL");
  expect_refused(kolo_allreduce(&t, KOLO_BIT_AND, 1, 1, 0), "band is not defined for float32");
  expect_refused(kolo_allreduce(&t, 9, 1, 1, 0), "reduce op 9 is not a kolo_reduce_op");
  expect_refused(kolo_allreduce(&t, KOLO_SUM, 1, 1, 7), "process set 7 does not exist");
  expect_refused(kolo_broadcast(&t, 2, 0), "root rank 2");
  expect_refused(kolo_alltoall(&t, nullptr, 2, 0), "splits is NULL");
  kolo_tensor bad_dtype = t;
  bad_dtype.dtype = 42;
  expect_refused(kolo_allgather(&bad_dtype, 0), "dtype 42 is not a kolo_dtype");
  kolo_tensor bad_ndim = t;
  bad_ndim.ndim = -1;
  expect_refused(kolo_allgather(&bad_ndim, 0), "ndim -1 is negative");
  kolo_tensor bad_shape = t;
  bad_shape.shape = nullptr;
  expect_refused(kolo_reducescatter(&bad_shape, KOLO_SUM, 1, 1, 0), "shape is NULL");
  expect_refused(kolo_add_process_set(nullptr, 2), "ranks is NULL");
  expect_refused(kolo_remove_process_set(0), "cannot be removed");

  kolo_tensor named[1] = {t};
  kolo_handle handles[1] = {0};
  EXPECT_EQ(kolo_grouped_allreduce(named, 1, KOLO_SUM, 1, 1, 0, "g", handles),
            KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(handles[0], -KOLO_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kolo_last_error(), "pass the group's name")) << kolo_last_error();

  kolo_handle ok = kolo_allreduce(&t, KOLO_SUM, 1, 1, 0);
  ASSERT_GT(ok, 0) << kolo_last_error();
  EXPECT_EQ(kolo_wait(ok, std::nan("")), KOLO_INVALID_ARGUMENT);
  EXPECT_EQ(kolo_wait(ok, -1), KOLO_OK);  // negative: no limit
}

TEST_F(CApi, UnknownHandlesAreErrorsNotCrashes) {
  for (kolo_handle bogus : {kolo_handle{12345}, kolo_handle{0}, kolo_handle{-1}}) {
    EXPECT_EQ(kolo_poll(bogus), -KOLO_INVALID_ARGUMENT);
    EXPECT_EQ(kolo_wait(bogus, 1), KOLO_INVALID_ARGUMENT);
    EXPECT_EQ(kolo_handle_status(bogus), KOLO_INVALID_ARGUMENT);
    EXPECT_EQ(kolo_handle_error(bogus), nullptr);
    EXPECT_EQ(kolo_handle_data(bogus), nullptr);
    EXPECT_EQ(kolo_handle_nbytes(bogus), -1);
    EXPECT_EQ(kolo_handle_ndim(bogus), -1);
    EXPECT_EQ(kolo_handle_shape(bogus), nullptr);
    EXPECT_EQ(kolo_handle_num_received_splits(bogus), -1);
    EXPECT_EQ(kolo_handle_received_splits(bogus), nullptr);
    EXPECT_EQ(kolo_handle_value(bogus), -1);
    EXPECT_EQ(kolo_release(bogus), KOLO_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(kolo_last_error(), "unknown kolo handle " + std::to_string(bogus)))
        << kolo_last_error();
  }
}

TEST_F(CApi, LastErrorIsPerThread) {
  EXPECT_EQ(kolo_rank(), -1);
  EXPECT_TRUE(contains(kolo_last_error(), "not initialized"));
  std::string other;
  std::thread([&] { other = kolo_last_error(); }).join();
  EXPECT_EQ(other, "");
}

TEST_F(CApi, HeaderCompilesAsC99AndRunsFromC) {
  char message[512];
  EXPECT_EQ(kolo_c_smoke(message, sizeof message), 0) << message;
}

// Rank 0 through the C API, configured by KOLO_* variables; rank 1 a
// kolo::Engine thread configured by hand; both meet in a TCP store server.
TEST_F(CApi, TwoRanksInitShutdownInitWaitTimeoutAndErrors) {
  rendezvous::TcpStoreServerOptions server_options;
  server_options.bind_address = "127.0.0.1";
  server_options.secret = "capi-test-secret";
  rendezvous::TcpStoreServer server(server_options);
  ScopedEnv env;
  env.set("KOLO_RANK", "0");
  env.set("KOLO_SIZE", "2");
  env.set("KOLO_LOCAL_RANK", "0");
  env.set("KOLO_LOCAL_SIZE", "2");
  env.set("KOLO_RENDEZVOUS_ADDR", "127.0.0.1");
  env.set("KOLO_RENDEZVOUS_PORT", std::to_string(server.port()));
  env.set("KOLO_SECRET", server_options.secret);
  env.set("KOLO_ADDRESS", "127.0.0.1");
  env.set("KOLO_START_TIMEOUT", "20");
  Config peer;
  peer.layout = {1, 2, 1, 2, 0, 1};
  peer.rendezvous.address = "127.0.0.1";
  peer.rendezvous.port = server.port();
  peer.rendezvous.secret = server_options.secret;
  peer.rendezvous.timeout = 20s;
  peer.settings.set("KOLO_ADDRESS", "127.0.0.1");  // loopback_tcp_options() as settings
  peer.settings.set("KOLO_TIMEOUT_SECONDS", "20");

  for (int round = 0; round < 3; ++round) {
    std::promise<void> checked;
    std::future<void> rank0_checked = checked.get_future();
    std::string peer_mismatch_error, rank0_mismatch_error;
    testing::run_threads(2, [&](int rank) {
      if (rank == 1) {
        Engine engine = internal::EngineAccess::create(peer);
        std::vector<float> v{2};
        if (round == 0) {
          ASSERT_EQ(rank0_checked.wait_for(30s), std::future_status::ready);
          Handle late = engine.allreduce(Tensor{v.data(), DataType::kFloat32, {1}}, v.data(),
                                         {.op = ReduceOp::kSum, .name = "late"});
          ASSERT_TRUE(late.wait(30s));
          EXPECT_TRUE(late.status().ok()) << late.error();
          std::vector<float> three(3);
          Handle mismatch = engine.allreduce(Tensor{three.data(), DataType::kFloat32, {3}},
                                             three.data(), {.name = "mm"});
          ASSERT_TRUE(mismatch.wait(30s));
          peer_mismatch_error = mismatch.error();
        }
        std::vector<int32_t> r{1 + round};
        Handle h = engine.allreduce(Tensor{r.data(), DataType::kInt32, {1}}, r.data(),
                                    {.op = ReduceOp::kSum, .name = "r"});
        ASSERT_TRUE(h.wait(30s));
        EXPECT_EQ(r[0], 1 + 2 * round);
        engine.shutdown();
        return;
      }
      ASSERT_EQ(kolo_init(), KOLO_OK) << kolo_last_error();
      EXPECT_EQ(kolo_size(), 2);
      EXPECT_EQ(kolo_rank(), 0);
      EXPECT_EQ(kolo_local_size(), 2);
      std::vector<int64_t> shape1{1};
      if (round == 0) {
        float one = 1;
        kolo_tensor t = tensor("late", &one, &one, KOLO_FLOAT32, shape1);
        kolo_handle h = kolo_allreduce(&t, KOLO_SUM, 1, 1, 0);
        ASSERT_GT(h, 0) << kolo_last_error();
        auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(kolo_wait(h, 0.15), KOLO_IN_PROGRESS);
        auto waited = std::chrono::steady_clock::now() - start;
        EXPECT_GE(waited, 150ms);
        EXPECT_LT(waited, 10s);
        EXPECT_EQ(kolo_poll(h), 0);
        EXPECT_EQ(kolo_handle_status(h), KOLO_IN_PROGRESS);
        EXPECT_STREQ(kolo_handle_error(h), "");
        EXPECT_EQ(kolo_handle_ndim(h), -1);
        EXPECT_EQ(kolo_release(h), KOLO_IN_PROGRESS);
        EXPECT_TRUE(contains(kolo_last_error(), "still running")) << kolo_last_error();
        EXPECT_EQ(kolo_allreduce(&t, KOLO_SUM, 1, 1, 0), -KOLO_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(kolo_last_error(), "already in use")) << kolo_last_error();
        checked.set_value();
        ASSERT_EQ(kolo_wait(h, 30), KOLO_OK) << kolo_handle_error(h);
        EXPECT_EQ(one, 3.0f);
        EXPECT_EQ(kolo_release(h), KOLO_OK);

        std::vector<float> two(2);
        std::vector<int64_t> shape2{2};
        kolo_tensor mt = tensor("mm", two.data(), two.data(), KOLO_FLOAT32, shape2);
        kolo_handle mm = kolo_allreduce(&mt, KOLO_AVERAGE, 1, 1, 0);
        ASSERT_EQ(kolo_wait(mm, 30), KOLO_INVALID_ARGUMENT);
        EXPECT_TRUE(contains(kolo_handle_error(mm), "mm")) << kolo_handle_error(mm);
        rank0_mismatch_error = kolo_handle_error(mm);
      }
      int32_t r = round;
      kolo_tensor rt = tensor("r", &r, &r, KOLO_INT32, shape1);
      kolo_handle h = kolo_allreduce(&rt, KOLO_SUM, 1, 1, 0);
      ASSERT_EQ(kolo_wait(h, 30), KOLO_OK) << kolo_handle_error(h);
      EXPECT_EQ(r, 1 + 2 * round);
      ASSERT_EQ(kolo_shutdown(), KOLO_OK) << kolo_last_error();
    });
    if (round == 0) {
      EXPECT_EQ(rank0_mismatch_error, peer_mismatch_error) << "both ranks report the same mismatch";
    }
  }
}

}  // namespace
}  // namespace kolo

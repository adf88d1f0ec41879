// An engine over the MPI backend (KOLO_BACKEND=mpi), as under a plain
// `mpirun -np N program` with no rendezvous server: negotiated allreduces
// submitted in a different order on every rank, a process set, a fused burst,
// and init -> shutdown -> init in one process (MPI stays initialised across).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/engine.h"

namespace kolo::core {
namespace {

Config mpi_config() {
  Config config = Config::FromSettings(settings::Values::Read());
  config.settings.set("KOLO_BACKEND", "mpi");
  config.engine.backend = "mpi";
  return config;
}

void expect_done(const Handle& h) {
  ASSERT_TRUE(h->wait_for(std::chrono::seconds(60))) << "no answer in 60 s";
  EXPECT_TRUE(h->status().ok()) << h->status().message();
}

// Tensors t0..t{k-1} of `count` floats, rank r's element i = r + i, enqueued
// in an order that differs per rank; each result is the sum over ranks.
void negotiated_allreduces(Engine& engine, int tensors, size_t count) {
  const int rank = engine.layout().rank;
  const int size = engine.layout().size;
  std::vector<std::vector<float>> data(static_cast<size_t>(tensors), std::vector<float>(count));
  std::vector<Handle> handles(static_cast<size_t>(tensors));
  for (int k = 0; k < tensors; ++k) {
    const int t = (k + rank) % tensors;  // rotated per rank: negotiation must match names
    for (size_t i = 0; i < count; ++i) data[t][i] = static_cast<float>(rank + i + t);
    handles[t] = engine.allreduce({"t" + std::to_string(t),
                                   data[t].data(),
                                   data[t].data(),
                                   DataType::kFloat32,
                                   {static_cast<int64_t>(count)},
                                   kCpuDevice},
                                  {ReduceOp::kSum});
  }
  for (int t = 0; t < tensors; ++t) {
    expect_done(handles[t]);
    for (size_t i = 0; i < count; i += count / 7 + 1) {
      const float want = static_cast<float>(size * (size - 1) / 2) +
                         static_cast<float>(size) * static_cast<float>(i + t);
      ASSERT_EQ(data[t][i], want) << "tensor " << t << " element " << i;
    }
  }
}

TEST(MpiEngine, NegotiatedAllreducesWithoutAStore) {
  Engine engine(mpi_config());
  EXPECT_EQ(engine.backend_name(), "mpi");
  EXPECT_GE(engine.layout().size, 1);
  negotiated_allreduces(engine, 12, 1000);   // fused together
  negotiated_allreduces(engine, 3, 300000);  // each past the fusion buffer's share
  engine.shutdown();
}

TEST(MpiEngine, ProcessSetOverASubcommunicator) {
  EngineOptions options;
  options.process_sets = {{0}};
  Engine engine(mpi_config(), options);
  if (engine.layout().rank == 0) {
    std::vector<int32_t> v{5};
    Handle h = engine.allreduce({"alone", v.data(), v.data(), DataType::kInt32, {1}, kCpuDevice},
                                {ReduceOp::kSum}, 1);
    expect_done(h);
    EXPECT_EQ(v[0], 5);
  }
  std::vector<int32_t> all{engine.layout().rank};
  Handle h = engine.allreduce({"all", all.data(), all.data(), DataType::kInt32, {1}, kCpuDevice},
                              {ReduceOp::kMax});
  expect_done(h);
  EXPECT_EQ(all[0], engine.layout().size - 1);
  engine.shutdown();
}

TEST(MpiEngine, InitShutdownInitInOneProcess) {
  for (int round = 0; round < 3; ++round) {
    Engine engine(mpi_config());
    negotiated_allreduces(engine, 2, 10);
    engine.shutdown();
  }
}

}  // namespace
}  // namespace kolo::core

// libkolo_mpi.so's entry point and its MpiPlugin: MPI's life in the process
// (initialise once, finalise at exit only if Kolo initialised it) and the
// making of the job's communicator for a new engine.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <tuple>

#include "backends/mpi/mpi_backend.h"
#include "backends/mpi/mpi_ops.h"
#include "backends/mpi/mpi_plugin.h"
#include "common/error.h"
#include "common/logging.h"

namespace kolo::backends::mpi {
namespace {

MpiThreadLevel to_level(int provided) {
  if (provided >= MPI_THREAD_MULTIPLE) return MpiThreadLevel::kMultiple;
  if (provided >= MPI_THREAD_SERIALIZED) return MpiThreadLevel::kSerialized;
  if (provided >= MPI_THREAD_FUNNELED) return MpiThreadLevel::kFunneled;
  return MpiThreadLevel::kSingle;
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// The members' MPI_COMM_WORLD ranks, in `comm`'s rank order.
std::vector<int> world_ranks_of(MPI_Comm comm, int size) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  std::vector<int> ranks(static_cast<size_t>(size));
  std::vector<int> translated(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<size_t>(r)] = r;
  const int rc = MPI_Group_translate_ranks(group, size, ranks.data(), world, translated.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  check_mpi(rc, "MPI_Group_translate_ranks");
  return translated;
}

// Every member's processor name, in rank order.
std::vector<std::string> host_names(MPI_Comm comm, int size) {
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check_mpi(MPI_Get_processor_name(mine, &length), "MPI_Get_processor_name");
  std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  check_mpi(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm),
            "MPI_Allgather");
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) names.emplace_back(all.data() + r * MPI_MAX_PROCESSOR_NAME);
  return names;
}

// Rank and size in the communicator that `split` makes, which is freed.
std::pair<int, int> place_in(MPI_Comm split) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(split, &rank);
  MPI_Comm_size(split, &size);
  MPI_Comm_free(&split);
  return {rank, size};
}

// MPI_Ibcast from rank 0 of MPI_COMM_WORLD, polled until `deadline`; past
// it the job ends (MPI_Abort), since a pending broadcast cannot be cancelled.
void broadcast_by(std::chrono::steady_clock::time_point deadline, void* buffer, int count,
                  MPI_Datatype type, const std::string& why_it_failed) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(buffer, count, type, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
  int done = 0;
  while (true) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      KOLO_LOG_ERROR("{}", why_it_failed);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class Plugin final : public MpiPlugin {
 public:
  MpiThreadLevel initialize() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = MPI_THREAD_SINGLE;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
                "MPI_Init_thread");
      // Kolo started MPI, so Kolo ends it, but only when the process ends:
      // engines come and go (init -> shutdown -> init) and MPI cannot be
      // initialised a second time.
      std::atexit(finalize_at_exit);
    }
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return to_level(provided);
  }

  std::optional<MpiThreadLevel> thread_level() override {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) return std::nullopt;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return to_level(provided);
  }

  int world_rank() override {
    int rank = 0;
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    return rank;
  }

  int world_size() override {
    int size = 0;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    return size;
  }

  void broadcast_world(std::string& data, std::chrono::milliseconds timeout,
                       const std::string& why_it_failed) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    uint64_t length = data.size();
    broadcast_by(deadline, &length, 1, MPI_UINT64_T, why_it_failed);
    data.resize(length);
    broadcast_by(deadline, data.data(), static_cast<int>(length), MPI_CHAR, why_it_failed);
  }

  SelfConnectedWorld connect(const MpiCommunicator& spec) override {
    const MpiThreadLevel level = initialize();
    if (level != MpiThreadLevel::kMultiple) {
      // Kolo calls MPI from its background thread while the program may call
      // it too (mpi4py): only MPI_THREAD_MULTIPLE makes that safe.
      KOLO_LOG_WARNING(
          "MPI was initialised without MPI_THREAD_MULTIPLE; Kolo's background thread and the "
          "program must then not call MPI at the same time");
    }
    MPI_Comm comm = make_communicator(spec);
    int rank = 0;
    int size = 1;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    SelfConnectedWorld world;
    // Ranks that share memory are one host; a host's n-th ranks form the
    // n-th cross group (Horovod's local and cross communicators).
    MPI_Comm local = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
              "MPI_Comm_split_type");
    std::tie(world.local_rank, world.local_size) = place_in(local);
    MPI_Comm cross = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(comm, world.local_rank, rank, &cross), "MPI_Comm_split");
    std::tie(world.cross_rank, world.cross_size) = place_in(cross);
    world.backend = std::make_unique<MpiBackend>(
        comm, std::make_shared<MpiOps>(), world_ranks_of(comm, size), host_names(comm, size));
    return world;
  }

 private:
  // A communicator for Kolo alone, over the ranks `spec` names.
  MPI_Comm make_communicator(const MpiCommunicator& spec) {
    MPI_Comm comm = MPI_COMM_NULL;
    if (spec.comm_address != nullptr) {
      const MPI_Comm given = *static_cast<const MPI_Comm*>(spec.comm_address);
      if (given == MPI_COMM_NULL) throw InvalidArgument("init(comm=...): the communicator is null");
      check_mpi(MPI_Comm_dup(given, &comm), "MPI_Comm_dup");
      return comm;
    }
    if (spec.world_ranks.empty()) {
      check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
      return comm;
    }
    const int me = world_rank();
    const int size = world_size();
    std::vector<int> ranks = spec.world_ranks;
    std::vector<int> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() || sorted.front() < 0 ||
        sorted.back() >= size) {
      throw InvalidArgument(
          fmt::format("init(comm={}): the ranks must be distinct ranks of MPI_COMM_WORLD (0 to {})",
                      fmt::join(ranks, ", "), size - 1));
    }
    if (!std::binary_search(sorted.begin(), sorted.end(), me)) {
      throw InvalidArgument(fmt::format(
          "init(comm=[{}]): rank {} of MPI_COMM_WORLD is not in the list, so it is not part of "
          "this job; only the listed ranks may call init with it",
          fmt::join(ranks, ", "), me));
    }
    MPI_Group world = MPI_GROUP_NULL;
    MPI_Group members = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
    check_mpi(MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &members),
              "MPI_Group_incl");
    const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, members, 0, &comm);
    MPI_Group_free(&members);
    MPI_Group_free(&world);
    check_mpi(rc, "MPI_Comm_create_group");
    return comm;
  }
};

}  // namespace
}  // namespace kolo::backends::mpi

extern "C" __attribute__((visibility("default"))) kolo::backends::MpiPlugin* kolo_mpi_plugin(
    uint32_t abi_version) {
  if (abi_version != kolo::backends::kMpiPluginAbiVersion) return nullptr;
  // MPI's state is the process's, so the plugin's object is too: it lives
  // until exit and holds nothing but what MPI itself holds.
  static kolo::backends::mpi::Plugin plugin;
  return &plugin;
}

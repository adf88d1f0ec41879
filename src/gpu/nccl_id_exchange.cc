#include "gpu/nccl_id_exchange.h"

#include <fmt/format.h>

#include "common/error.h"

namespace kolo::gpu {
namespace {

void check_size(const std::string& id, const std::string& key, std::string_view from) {
  if (id.size() != kNcclUniqueIdBytes) {
    throw InvalidArgument(fmt::format("NCCL unique id under '{}' from {} has {} bytes, not {}", key,
                                      from, id.size(), kNcclUniqueIdBytes));
  }
}

}  // namespace

std::string nccl_id_key(int32_t process_set, int64_t generation) {
  return fmt::format("nccl_id/{}/{}", process_set, generation);
}

std::string exchange_nccl_id(rendezvous::Store& store, const std::string& key, int rank,
                             const std::function<std::string()>& make_id,
                             std::chrono::milliseconds timeout) {
  if (rank == 0) {
    std::string id = make_id();
    check_size(id, key, "this rank's NCCL");
    store.set(key, rendezvous::to_bytes(id));
    return id;
  }
  std::string id = rendezvous::to_string(store.wait_get(key, timeout));
  check_size(id, key, "the store");
  return id;
}

}  // namespace kolo::gpu

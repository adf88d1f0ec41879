#include "collectives/collective_settings.h"

namespace kolo::collectives {
namespace {

HierarchicalMode hierarchical(const std::string& value) {
  if (value == "1") return HierarchicalMode::kOn;
  if (value == "0") return HierarchicalMode::kOff;
  return HierarchicalMode::kAuto;
}

}  // namespace

CollectiveOptions collective_options_from(const settings::Values& v) {
  CollectiveOptions co;
  const std::string& allreduce = v.text("KOLO_ALLREDUCE_ALGORITHM");
  co.allreduce_algorithm = allreduce == "ring" ? AllreduceAlgorithm::kRing
                           : allreduce == "recursive_doubling"
                               ? AllreduceAlgorithm::kRecursiveDoubling
                               : AllreduceAlgorithm::kAuto;
  co.allreduce_ring_threshold = v.bytes("KOLO_ALLREDUCE_RING_THRESHOLD");
  const std::string& broadcast = v.text("KOLO_BROADCAST_ALGORITHM");
  co.broadcast_algorithm = broadcast == "tree"        ? BroadcastAlgorithm::kTree
                           : broadcast == "pipelined" ? BroadcastAlgorithm::kPipelined
                                                      : BroadcastAlgorithm::kAuto;
  co.broadcast_pipeline_threshold = v.bytes("KOLO_BROADCAST_PIPELINE_THRESHOLD");
  co.broadcast_chunk_bytes = v.bytes("KOLO_BROADCAST_CHUNK_BYTES");
  co.ring_chunk_bytes = v.bytes("KOLO_RING_CHUNK_BYTES");
  co.ring_min_chunk_bytes = v.bytes("KOLO_RING_MIN_CHUNK_BYTES");
  co.shm_small_bytes = v.bytes("KOLO_SHM_SMALL_BYTES");
  co.hierarchical_allreduce = hierarchical(v.text("KOLO_HIERARCHICAL_ALLREDUCE"));
  co.hierarchical_allgather = hierarchical(v.text("KOLO_HIERARCHICAL_ALLGATHER"));
  return co;
}

}  // namespace kolo::collectives

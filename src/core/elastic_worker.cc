#include "core/elastic_worker.h"

#include <fmt/format.h>

#include <charconv>

#include "common/error.h"
#include "common/logging.h"

namespace kolo::core {

namespace elastic = rendezvous::elastic;

elastic::Assignment join_next_round(rendezvous::Store& store, const std::string& worker_id,
                                    std::chrono::milliseconds timeout) {
  const int64_t join = store.add(elastic::joins_key(worker_id), 1);
  store.add(elastic::arrivals_key(), 1);  // wakes the driver
  KOLO_LOG_DEBUG("elastic worker {}: join #{} sent; waiting for the driver", worker_id, join);
  rendezvous::Bytes reply;
  try {
    reply = store.wait_get(elastic::assignment_key(worker_id, join), timeout);
  } catch (const TimeoutError&) {
    throw TimeoutError(fmt::format(
        "elastic worker {}: kolorun placed it in no round within {} s (KOLO_ELASTIC_TIMEOUT)",
        worker_id, timeout.count() / 1000.0));
  }
  elastic::Assignment a = elastic::decode_assignment(rendezvous::to_string(reply));
  switch (a.kind) {
    case elastic::Assignment::Kind::kRemoved:
      throw WorkerRemovedError(fmt::format("kolorun removed this worker: {}", a.reason));
    case elastic::Assignment::Kind::kAborted:
      throw WorkerRemovedError(fmt::format("kolorun is ending the job: {}", a.reason));
    case elastic::Assignment::Kind::kJoin:
      break;
  }
  KOLO_LOG_DEBUG("elastic worker {}: round {} as rank {} of {}", worker_id, a.round, a.rank,
                 a.size);
  return a;
}

HostUpdates host_updates_since(rendezvous::Store& store, int64_t acked) {
  HostUpdates out;
  auto seq = store.get(elastic::hosts_seq_key());
  if (seq) {
    const std::string text = rendezvous::to_string(*seq);
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out.seq);
    if (error != std::errc() || end != text.data() + text.size() || out.seq < 0)
      throw InvalidArgument(fmt::format("elastic host update seq is not a number: '{}'", text));
  }
  // The driver writes each update before raising the seq, so these exist.
  for (int64_t s = acked + 1; s <= out.seq; ++s)
    if (auto change = store.get(elastic::host_update_key(s)))
      out.changes |= elastic::decode_host_change(rendezvous::to_string(*change));
  return out;
}

}  // namespace kolo::core

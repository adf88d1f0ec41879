// The elastic protocol: how kolorun's elastic driver and the workers'
// engines talk through the job's rendezvous store. The runner and the core
// share only rendezvous/ and common/, so the key names and the assignment
// format live here, in one place.
//
// A worker (one process, with a driver-given id that never changes) joins a
// round:
//   n = add(joins_key(id), 1); add(arrivals_key(), 1);
//   wait_get(assignment_key(id, n))  -> an Assignment
// The driver watches arrivals_key() to notice joins without reading every
// worker's counter, and answers each join once: with the worker's place in
// the next round (rank, size, ...) when every worker of that round has
// arrived, or with "removed" / "aborted". A joined worker's engine scopes
// its keys with round_prefix(round), so rounds never see each other's
// addresses.
//
// Host changes found by discovery are numbered: the driver writes
// host_update_key(seq) ("added", "removed" or "added,removed") and then
// hosts_seq_key() = seq. An assignment carries the seq its round was built
// from; a worker that later reads a higher seq knows the hosts changed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rendezvous/store.h"

namespace kolo::rendezvous::elastic {

std::string arrivals_key();
std::string joins_key(const std::string& worker_id);
std::string assignment_key(const std::string& worker_id, int64_t join);
std::string hosts_seq_key();
std::string host_update_key(int64_t seq);
// The engine's key scope for one round ("kolo/round<R>").
std::string round_prefix(int64_t round);
// Set by the driver, to the reason, when it gives a formed round up (a
// member died or asked to join again): members still meeting their peers
// stop waiting for ones that will never come (rendezvous/watched_store.h).
std::string round_over_key(int64_t round);

// The value of a counter the workers bump with Store::add (arrivals_key, joins_key); 0 while the
// key is unset. Throws InvalidArgument naming the key when it holds anything but a decimal
// integer in range: another writer, or a corrupted store, and never a std exception.
int64_t read_counter(Store& store, const std::string& key);

// Bits of a host update.
enum HostChange : unsigned { kHostsAdded = 1u, kHostsRemoved = 2u };
std::string encode_host_change(unsigned changes);
// Throws InvalidArgument on text encode_host_change() does not produce.
unsigned decode_host_change(std::string_view text);

struct Assignment {
  enum class Kind { kJoin, kRemoved, kAborted };
  Kind kind = Kind::kJoin;
  std::string reason;  // kRemoved / kAborted: why, in words for the user
  int64_t round = 0;
  int rank = 0, size = 1, local_rank = 0, local_size = 1, cross_rank = 0, cross_size = 1;
  std::string host;
  int64_t hosts_seq = 0;  // the host update this round already includes
  // Members in no earlier round: when there are any, every member must sync
  // its state from rank 0, even after a host update that only removed hosts.
  int newcomers = 0;
  bool operator==(const Assignment&) const = default;
};

// "key=value" lines; the reason and host may hold any byte but '\n'.
std::string encode_assignment(const Assignment& assignment);
// Throws InvalidArgument naming what is wrong (missing field, bad number,
// rank outside size).
Assignment decode_assignment(std::string_view text);

}  // namespace kolo::rendezvous::elastic

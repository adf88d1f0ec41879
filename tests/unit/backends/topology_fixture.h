// Ranks as threads, connected by TCP over loopback, each with a HostBackend
// that was told its launcher host index: hosts[r] is rank r's host. Ranks of
// one index share memory; different indexes talk over TCP, as on separate
// machines.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/host/host_backend.h"

namespace kolo::testing {

struct Layout {
  std::vector<int> hosts;  // host index of each rank
  std::string name;
};

// Small slots, so that tests reach many rounds (and both slots) with
// moderate counts.
transport::shm::ShmOptions small_slot_options();

std::vector<std::unique_ptr<backends::HostBackend>> make_backends(
    const std::vector<int>& hosts, const transport::shm::ShmOptions& shm = small_slot_options(),
    const collectives::CollectiveOptions& options = {});

// Runs fn(backend) on every rank at once; "" if all returned, else one line
// per rank that threw (a throwing rank aborts, so the others fail fast).
std::string run_backends(std::vector<std::unique_ptr<backends::HostBackend>>& backends,
                         const std::function<void(backends::Backend&)>& fn);

}  // namespace kolo::testing

// Counts the heap allocations (global operator new) made by the calling
// thread between start and stop, to show that a code path allocates nothing.
// Linking allocation_counter.cc replaces operator new for the whole binary.
#pragma once

#include <cstddef>

namespace kolo::testing {

void start_counting_allocations();
// The number of allocations since start_counting_allocations() on this thread.
std::size_t stop_counting_allocations();

}  // namespace kolo::testing

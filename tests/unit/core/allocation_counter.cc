// In a file of its own so no caller sees the replacement inline (GCC would
// then warn that delete's free() pairs with new).
#include "allocation_counter.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool tl_counting = false;
thread_local std::size_t tl_allocations = 0;
}  // namespace

namespace kolo::testing {

void start_counting_allocations() {
  tl_allocations = 0;
  tl_counting = true;
}

std::size_t stop_counting_allocations() {
  tl_counting = false;
  return tl_allocations;
}

}  // namespace kolo::testing

void* operator new(std::size_t size) {
  if (tl_counting) ++tl_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

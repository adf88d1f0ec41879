// What the TCP core's state machines (operation_state.h, peer_state.h) share:
// a state's name from a table, and the check that refuses a transition.
#pragma once

#include <cstddef>

#include "common/check.h"

namespace kolo::transport::tcp {

// `names` lists every state in declaration order, `last` being the last.
template <auto last, typename State, size_t N>
constexpr const char* name_in(const char* const (&names)[N], State state) {
  static_assert(static_cast<size_t>(last) + 1 == N, "one name per state");
  return names[static_cast<size_t>(state)];
}

// Returns `to` when `allowed`; otherwise throws InternalError naming the
// machine and both states.
template <typename State>
State checked_transition(const char* machine, State from, State to, bool allowed) {
  KOLO_CHECK_MSG(allowed, "{} cannot go from {} to {}", machine, state_name(from), state_name(to));
  return to;
}

}  // namespace kolo::transport::tcp

#include "transport/tcp/peer_state.h"

#include <cstddef>
#include <iterator>

#include "common/check.h"

namespace kolo::transport::tcp {

namespace {

bool allowed(PeerState from, PeerState to) {
  using S = PeerState;
  switch (from) {
    case S::kOpen:
      return to == S::kSaidGoodbye || to == S::kGone;
    case S::kSaidGoodbye:
      return to == S::kGoneAfterGoodbye;
    case S::kGone:
      // A GOODBYE still parsed from bytes staged before the loss was noticed.
      return to == S::kGoneAfterGoodbye;
    case S::kGoneAfterGoodbye:
      return false;
  }
  return false;
}

}  // namespace

const char* state_name(PeerState state) {
  static constexpr const char* kNames[] = {"open", "said-goodbye", "gone", "gone-after-goodbye"};
  static_assert(std::size(kNames) == static_cast<size_t>(PeerState::kGoneAfterGoodbye) + 1);
  return kNames[static_cast<size_t>(state)];
}

PeerState transition(PeerState from, PeerState to) {
  KOLO_CHECK_MSG(allowed(from, to), "TCP peer link cannot go from {} to {}", state_name(from),
                 state_name(to));
  return to;
}

}  // namespace kolo::transport::tcp

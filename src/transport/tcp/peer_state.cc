#include "transport/tcp/peer_state.h"

#include "transport/tcp/checked_transition.h"

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
  return name_in<PeerState::kGoneAfterGoodbye>(kNames, state);
}

PeerState transition(PeerState from, PeerState to) {
  return checked_transition("TCP peer link", from, to, allowed(from, to));
}

}  // namespace kolo::transport::tcp

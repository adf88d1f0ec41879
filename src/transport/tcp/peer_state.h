// Whether a peer connection is still usable, and whether the peer closed it
// deliberately. Every change goes through transition(), which refuses a
// change the core never makes.
#pragma once

namespace kolo::transport::tcp {

enum class PeerState {
  kOpen,
  kSaidGoodbye,       // its context was destroyed deliberately; the connection is still up
  kGone,              // EOF or error seen; the socket is no longer polled
  kGoneAfterGoodbye,  // both: a deliberate close (or a GOODBYE parsed from bytes read before)
};

constexpr bool is_gone(PeerState state) {
  return state == PeerState::kGone || state == PeerState::kGoneAfterGoodbye;
}
constexpr bool said_goodbye(PeerState state) {
  return state == PeerState::kSaidGoodbye || state == PeerState::kGoneAfterGoodbye;
}

const char* state_name(PeerState state);

// Returns `to`; throws InternalError naming both states when the core never
// goes from `from` to `to`.
PeerState transition(PeerState from, PeerState to);

}  // namespace kolo::transport::tcp

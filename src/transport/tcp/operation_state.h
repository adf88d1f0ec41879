// The life of one posted send or receive, as the TCP core sees it. Every
// change goes through transition(), which refuses a change the core never
// makes, so a broken invariant fails at the change that broke it instead of
// as a buffer written after its wait returned.
#pragma once

namespace kolo::transport::tcp {

enum class OperationState {
  kCreated,     // not yet handed to the transport
  kPosted,      // a receive waiting in the Matcher: still cancellable
  kBusy,        // the transport reads or writes the buffer (receive being filled, send queued)
  kFailedBusy,  // failed, but the transport still reads or writes the buffer
  kVoided,      // its frame was voided mid-way: held by nobody until the poison that follows
  kFinished,    // succeeded or failed, and the transport no longer touches the buffer
};

// Succeeded or failed; the caller may still have to wait for the buffer.
constexpr bool is_done(OperationState state) {
  return state == OperationState::kFailedBusy || state == OperationState::kFinished;
}

const char* state_name(OperationState state);

// Returns `to`; throws InternalError naming both states when the core never
// goes from `from` to `to`.
OperationState transition(OperationState from, OperationState to);

}  // namespace kolo::transport::tcp

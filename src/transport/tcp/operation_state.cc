#include "transport/tcp/operation_state.h"

#include "transport/tcp/checked_transition.h"

namespace kolo::transport::tcp {

namespace {

bool allowed(OperationState from, OperationState to) {
  using S = OperationState;
  // Any unfinished operation can finish: completed, cancelled, or failed by
  // a poison or a size mismatch while the transport does not hold it.
  if (to == S::kFinished) return from != S::kFinished;
  switch (from) {
    case S::kCreated:
      return to == S::kPosted || to == S::kBusy;
    case S::kPosted:
      return to == S::kBusy;
    case S::kBusy:
      return to == S::kFailedBusy || to == S::kVoided;
    case S::kFailedBusy:
    case S::kVoided:
    case S::kFinished:
      return false;
  }
  return false;
}

}  // namespace

const char* state_name(OperationState state) {
  static constexpr const char* kNames[] = {"created",     "posted", "busy",
                                           "failed-busy", "voided", "finished"};
  return name_in<OperationState::kFinished>(kNames, state);
}

OperationState transition(OperationState from, OperationState to) {
  return checked_transition("TCP operation", from, to, allowed(from, to));
}

}  // namespace kolo::transport::tcp

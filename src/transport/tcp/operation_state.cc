#include "transport/tcp/operation_state.h"

#include "common/check.h"

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
  switch (state) {
    case OperationState::kCreated:
      return "created";
    case OperationState::kPosted:
      return "posted";
    case OperationState::kBusy:
      return "busy";
    case OperationState::kFailedBusy:
      return "failed-busy";
    case OperationState::kVoided:
      return "voided";
    case OperationState::kFinished:
      return "finished";
  }
  return "unknown";
}

OperationState transition(OperationState from, OperationState to) {
  KOLO_CHECK_MSG(allowed(from, to), "TCP operation cannot go from {} to {}", state_name(from),
                 state_name(to));
  return to;
}

}  // namespace kolo::transport::tcp

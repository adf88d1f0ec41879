#include "transport/tcp/operation_state.h"

#include <cstddef>
#include <iterator>

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
  static constexpr const char* kNames[] = {"created",     "posted", "busy",
                                           "failed-busy", "voided", "finished"};
  static_assert(std::size(kNames) == static_cast<size_t>(OperationState::kFinished) + 1);
  return kNames[static_cast<size_t>(state)];
}

OperationState transition(OperationState from, OperationState to) {
  KOLO_CHECK_MSG(allowed(from, to), "TCP operation cannot go from {} to {}", state_name(from),
                 state_name(to));
  return to;
}

}  // namespace kolo::transport::tcp

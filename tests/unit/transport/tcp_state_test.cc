// The TCP core's operation and peer-link state machines: every transition
// the core makes is allowed, and every other one is refused with an error
// that names both states.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "common/error.h"
#include "transport/tcp/operation_state.h"
#include "transport/tcp/peer_state.h"

namespace kolo::transport::tcp {
namespace {

template <typename State>
void expect_refused(State from, State to) {
  try {
    transition(from, to);
    ADD_FAILURE() << state_name(from) << " -> " << state_name(to) << " was allowed";
  } catch (const InternalError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(std::string("from ") + state_name(from)), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("to ") + state_name(to)), std::string::npos) << message;
  }
}

// Checks every (from, to) pair against `allowed`, so a transition added to
// or dropped from the table without updating the test fails here.
template <typename State, size_t N>
void expect_exactly(const State (&states)[N], const std::set<std::pair<State, State>>& allowed) {
  int accepted = 0;
  for (State from : states) {
    for (State to : states) {
      if (allowed.count({from, to})) {
        EXPECT_EQ(transition(from, to), to) << state_name(from) << " -> " << state_name(to);
        ++accepted;
      } else {
        expect_refused(from, to);
      }
    }
  }
  EXPECT_EQ(accepted, static_cast<int>(allowed.size()));
}

TEST(TcpOperationState, AllowsExactlyTheCoresTransitions) {
  using S = OperationState;
  const S states[] = {S::kCreated, S::kPosted, S::kBusy, S::kFailedBusy, S::kVoided, S::kFinished};
  expect_exactly(states, {
                             // handed to the transport
                             {S::kCreated, S::kPosted},
                             {S::kCreated, S::kBusy},
                             // a message arrives for a posted receive
                             {S::kPosted, S::kBusy},
                             // poisoned, or its frame voided, while in the transport
                             {S::kBusy, S::kFailedBusy},
                             {S::kBusy, S::kVoided},
                             // finishing: from anywhere but finished
                             {S::kCreated, S::kFinished},
                             {S::kPosted, S::kFinished},
                             {S::kBusy, S::kFinished},
                             {S::kFailedBusy, S::kFinished},
                             {S::kVoided, S::kFinished},
                         });
}

TEST(TcpOperationState, RefusesToFinishTwiceOrToLeaveTheTransportForThePostedQueue) {
  expect_refused(OperationState::kFinished, OperationState::kFinished);
  expect_refused(OperationState::kBusy, OperationState::kPosted);
  expect_refused(OperationState::kFailedBusy, OperationState::kBusy);
}

TEST(TcpOperationState, DoneMeansFailedOrFinished) {
  EXPECT_TRUE(is_done(OperationState::kFailedBusy));
  EXPECT_TRUE(is_done(OperationState::kFinished));
  EXPECT_FALSE(is_done(OperationState::kBusy));
  EXPECT_FALSE(is_done(OperationState::kVoided));
  EXPECT_FALSE(is_done(OperationState::kPosted));
}

TEST(TcpPeerState, AllowsExactlyTheCoresTransitions) {
  using S = PeerState;
  const S states[] = {S::kOpen, S::kSaidGoodbye, S::kGone, S::kGoneAfterGoodbye};
  expect_exactly(states, {
                             {S::kOpen, S::kSaidGoodbye},
                             {S::kOpen, S::kGone},
                             {S::kSaidGoodbye, S::kGoneAfterGoodbye},
                             // a GOODBYE parsed from bytes staged before the loss
                             {S::kGone, S::kGoneAfterGoodbye},
                         });
}

TEST(TcpPeerState, RefusesToReopenALink) {
  expect_refused(PeerState::kGone, PeerState::kOpen);
  expect_refused(PeerState::kSaidGoodbye, PeerState::kOpen);
  expect_refused(PeerState::kGoneAfterGoodbye, PeerState::kGone);
}

TEST(TcpPeerState, GoneAndGoodbyeAreIndependentFacts) {
  EXPECT_FALSE(is_gone(PeerState::kOpen));
  EXPECT_FALSE(said_goodbye(PeerState::kOpen));
  EXPECT_TRUE(said_goodbye(PeerState::kSaidGoodbye));
  EXPECT_FALSE(is_gone(PeerState::kSaidGoodbye));
  EXPECT_TRUE(is_gone(PeerState::kGone));
  EXPECT_FALSE(said_goodbye(PeerState::kGone));
  EXPECT_TRUE(is_gone(PeerState::kGoneAfterGoodbye));
  EXPECT_TRUE(said_goodbye(PeerState::kGoneAfterGoodbye));
}

}  // namespace
}  // namespace kolo::transport::tcp

#include "rendezvous/failure_report.h"

#include <gtest/gtest.h>

#include "rendezvous/memory_store.h"

namespace kolo::rendezvous {
namespace {

const std::string kMismatch = "Mismatched shapes for allreduce of tensor 'grad.1': ...";
const std::string kLost = "rank 2 (host h) stopped answering";

TEST(FailureReport, TheFirstReportStands) {
  MemoryStore store;
  EXPECT_EQ(reported_failure(store, "kolo"), std::nullopt);
  report_failure(store, "kolo", 1, kMismatch);
  report_failure(store, "kolo", 0, kMismatch);
  report_failure(store, "kolo", 0, kLost);
  EXPECT_EQ(reported_failure(store, "kolo"), "rank 1 reports: " + kMismatch);
}

// A program that caught the mismatch and went on: any rank withdraws it (all
// were given it), and the failure that ends the job later is reported.
TEST(FailureReport, AWithdrawnErrorGivesWayToTheNextFailure) {
  MemoryStore store;
  report_failure(store, "kolo", 1, kMismatch);
  withdraw_failure(store, "kolo", kMismatch);
  EXPECT_EQ(reported_failure(store, "kolo"), std::nullopt);
  withdraw_failure(store, "kolo", kMismatch);  // another rank that went on
  report_failure(store, "kolo", 0, kLost);
  EXPECT_EQ(reported_failure(store, "kolo"), "rank 0 reports: " + kLost);
}

// A rank that went on past an error withdraws only that error, never a
// report of another failure written since.
TEST(FailureReport, WithdrawingLeavesAnotherErrorsReport) {
  MemoryStore store;
  report_failure(store, "kolo", 0, kLost);
  withdraw_failure(store, "kolo", kMismatch);
  withdraw_failure(store, "kolo", "host h) stopped answering");  // a tail of it is not it
  EXPECT_EQ(reported_failure(store, "kolo"), "rank 0 reports: " + kLost);
}

}  // namespace
}  // namespace kolo::rendezvous

// The job's failure as the ranks saw it, for kolorun's last line. When a
// rank fails, the first rank whose engine finds the cause (a peer that
// stopped answering, a mismatch, a stall past the shutdown time) writes it
// here; the rank that then exits first is often a healthy one that merely
// reacted, and kolorun names the reported cause instead.
//
// A negotiation error (a mismatch, a stalled tensor) does not end the
// engine: a program may catch it and go on, as tests that provoke one on
// purpose do. Its report is then withdrawn (the engine sees the program go
// on: core/program_progress.h), so a later failure is reported in its place
// and kolorun never names an error the program survived.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/store.h"

namespace kolo::rendezvous {

// The key, in the scope of the job's keys (`prefix`, "kolo" under kolorun).
std::string failure_report_key(const std::string& prefix);

// Reports `error` as rank `rank`'s ("rank R reports: <error>"). Keeps the
// first report: later ones (the same failure seen by other ranks) leave it
// as it is, unless it was withdrawn. Never throws: a store that cannot be
// reached loses the report, not the rank's own error.
void report_failure(Store& store, const std::string& prefix, int rank, const std::string& error);

// Withdraws the report if it gives `error`, whichever rank made it (every
// rank is given the same negotiation error). Never throws.
void withdraw_failure(Store& store, const std::string& prefix, const std::string& error);

// The report, if a rank made one and it was not withdrawn.
std::optional<std::string> reported_failure(Store& store, const std::string& prefix);

}  // namespace kolo::rendezvous

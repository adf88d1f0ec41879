// The job's failure as the ranks saw it, for kolorun's last line. When a
// rank fails, the first rank whose engine finds the cause (a peer that
// stopped answering, a mismatch, a stall past the shutdown time) writes it
// here; the rank that then exits first is often a healthy one that merely
// reacted, and kolorun names the reported cause instead.
#pragma once

#include <optional>
#include <string>

#include "rendezvous/store.h"

namespace kolo::rendezvous {

// The key, in the scope of the job's keys (`prefix`, "kolo" under kolorun).
std::string failure_report_key(const std::string& prefix);

// Keeps the first report: later ones (the same failure seen by other ranks)
// leave it as it is. Never throws: a store that cannot be reached loses the
// report, not the rank's own error.
void report_failure(Store& store, const std::string& prefix, const std::string& text);

// The report, if any rank made one.
std::optional<std::string> reported_failure(Store& store, const std::string& prefix);

}  // namespace kolo::rendezvous

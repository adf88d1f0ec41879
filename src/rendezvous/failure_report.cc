#include "rendezvous/failure_report.h"

#include <fmt/format.h>

#include <exception>

namespace kolo::rendezvous {
namespace {

// A withdrawn report is an empty value rather than a removed key, so that
// withdrawing is a compare-and-set: a plain remove could delete a report
// another rank wrote after this one read the value.
const Bytes kWithdrawn;

std::string report_text(int rank, const std::string& error) {
  return fmt::format("rank {} reports: {}", rank, error);
}

bool gives(const Bytes& report, const std::string& error) {
  const std::string text = to_string(report);
  const std::string tail = " reports: " + error;
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string failure_report_key(const std::string& prefix) {
  return prefix + "/failure";
}

void report_failure(Store& store, const std::string& prefix, int rank, const std::string& error) {
  const std::string key = failure_report_key(prefix);
  const Bytes text = to_bytes(report_text(rank, error));
  try {
    auto result = store.compare_set(key, std::nullopt, text);
    if (!result.swapped && result.current == kWithdrawn) store.compare_set(key, kWithdrawn, text);
  } catch (const std::exception&) {
    // The rank fails with its own message either way.
  }
}

void withdraw_failure(Store& store, const std::string& prefix, const std::string& error) {
  const std::string key = failure_report_key(prefix);
  try {
    auto current = store.get(key);
    if (current && gives(*current, error)) store.compare_set(key, current, kWithdrawn);
  } catch (const std::exception&) {
    // Then kolorun may name the error the program survived; nothing worse.
  }
}

std::optional<std::string> reported_failure(Store& store, const std::string& prefix) {
  auto value = store.get(failure_report_key(prefix));
  if (!value || value->empty()) return std::nullopt;
  return to_string(*value);
}

}  // namespace kolo::rendezvous

#include "rendezvous/failure_report.h"

#include <exception>

namespace kolo::rendezvous {

std::string failure_report_key(const std::string& prefix) {
  return prefix + "/failure";
}

void report_failure(Store& store, const std::string& prefix, const std::string& text) {
  try {
    store.compare_set(failure_report_key(prefix), std::nullopt, to_bytes(text));
  } catch (const std::exception&) {
    // The rank fails with its own message either way.
  }
}

std::optional<std::string> reported_failure(Store& store, const std::string& prefix) {
  auto value = store.get(failure_report_key(prefix));
  if (!value) return std::nullopt;
  return to_string(*value);
}

}  // namespace kolo::rendezvous

#include "common/error.h"

#include <exception>

#include "common/check.h"

namespace kolo {

Status status_from_current_exception() {
  try {
    throw;
  } catch (const Exception& e) {
    return e.status();
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, "unknown exception");
  }
}

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

namespace detail {
void check_failed(const char* file, int line, const char* condition, const std::string& detail) {
  std::string what = fmt::format("internal check failed at {}:{}: {}", file, line, condition);
  if (!detail.empty()) what += " (" + detail + ")";
  throw InternalError(what);
}
}  // namespace detail

}  // namespace kolo

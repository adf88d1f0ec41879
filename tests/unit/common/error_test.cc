// Kolo's exceptions are one hierarchy: whatever the core throws is a kolo::Exception carrying
// the Status the C API and the Python bindings report.
#include "common/error.h"

#include <gtest/gtest.h>

#include <string>

#include "kolo/exception.h"

namespace kolo {
namespace {

TEST(Error, EveryInternalErrorIsAKoloExceptionWithItsStatus) {
  try {
    throw PeerLostError("rank 3 lost");
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), StatusCode::kPeerLost);
    EXPECT_EQ(e.status().message(), "rank 3 lost");
    // The bare message, as it is nested into other messages.
    EXPECT_EQ(std::string(e.what()), "rank 3 lost");
    return;
  }
  ADD_FAILURE() << "not caught as kolo::Exception";
}

TEST(Error, APublicExceptionReadsAsItsStatus) {
  const Exception e(Status(StatusCode::kInvalidArgument, "bad name"));
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()), Status(StatusCode::kInvalidArgument, "bad name").ToString());
}

TEST(Error, StatusFromCurrentExceptionKeepsCodeAndMessage) {
  const auto status_of = [](auto&& thrower) {
    try {
      thrower();
    } catch (...) {
      return status_from_current_exception();
    }
    return Status();
  };
  const Status internal = status_of([] { throw TimeoutError("waited 5 s"); });
  EXPECT_EQ(internal.code(), StatusCode::kTimeout);
  EXPECT_EQ(internal.message(), "waited 5 s");
  const Status public_one =
      status_of([] { throw Exception(Status(StatusCode::kNotFound, "no set 4")); });
  EXPECT_EQ(public_one.code(), StatusCode::kNotFound);
  EXPECT_EQ(public_one.message(), "no set 4");
  const Status other = status_of([] { throw std::runtime_error("boom"); });
  EXPECT_EQ(other.code(), StatusCode::kInternal);
  EXPECT_EQ(other.message(), "boom");
}

}  // namespace
}  // namespace kolo

#include "common/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

namespace kolo {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

// Both ends of a fresh pipe; the test owns them through UniqueFd.
std::pair<int, int> make_pipe() {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  return {fds[0], fds[1]};
}

TEST(UniqueFd, ClosesOnDestruction) {
  auto [read_end, write_end] = make_pipe();
  UniqueFd keep_write_end(write_end);
  {
    UniqueFd fd(read_end);
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(fd.get(), read_end);
  }
  EXPECT_FALSE(is_open(read_end));
  EXPECT_TRUE(is_open(write_end));
}

TEST(UniqueFd, DefaultHoldsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.release(), -1);
}

TEST(UniqueFd, MoveHandsOverOwnershipAndClosesOnce) {
  auto [read_end, write_end] = make_pipe();
  UniqueFd keep_write_end(write_end);
  UniqueFd first(read_end);
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first.valid());
  EXPECT_EQ(second.get(), read_end);
  UniqueFd third;
  third = std::move(second);
  EXPECT_FALSE(second.valid());
  EXPECT_TRUE(is_open(read_end));
  third.reset();
  EXPECT_FALSE(third.valid());
  EXPECT_FALSE(is_open(read_end));
}

TEST(UniqueFd, ResetClosesTheOldDescriptorAndTakesTheNew) {
  auto [read_end, write_end] = make_pipe();
  UniqueFd fd(read_end);
  fd.reset(write_end);
  EXPECT_FALSE(is_open(read_end));
  EXPECT_EQ(fd.get(), write_end);
  EXPECT_TRUE(is_open(write_end));
}

TEST(UniqueFd, ReleaseGivesUpOwnership) {
  auto [read_end, write_end] = make_pipe();
  UniqueFd keep_write_end(write_end);
  int released = -1;
  {
    UniqueFd fd(read_end);
    released = fd.release();
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_EQ(released, read_end);
  EXPECT_TRUE(is_open(read_end));
  ::close(released);
}

}  // namespace
}  // namespace kolo

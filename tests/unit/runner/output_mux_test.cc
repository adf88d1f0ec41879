// Output multiplexing: whole lines only, tagged with rank and stream, never
// mixed between ranks, whatever the chunking of the pipes.
#include "runner/output_mux.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kolo::runner {
namespace {

class OutputMuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/run-mux-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    out_path_ = dir_ + ".out";
    err_path_ = dir_ + ".err";
    out_ = UniqueFd(::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    err_ = UniqueFd(::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
  }
  void TearDown() override {
    std::filesystem::remove(out_path_);
    std::filesystem::remove(err_path_);
    std::filesystem::remove_all(dir_ + ".d");
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string dir_, out_path_, err_path_;
  UniqueFd out_, err_;
};

TEST_F(OutputMuxTest, TagsCompleteLinesAndHoldsPartialOnes) {
  OutputMux mux(out_.get(), err_.get(), OutputOptions{}, 2);
  mux.add(0, OutputStream::kStdout, "hel");
  mux.add(1, OutputStream::kStdout, "world\nsecond li");
  mux.add(0, OutputStream::kStdout, "lo\n");
  mux.add(1, OutputStream::kStderr, "oops\n");
  mux.add(1, OutputStream::kStdout, "ne\n");
  mux.add(0, OutputStream::kStdout, "no newline at the end");
  mux.finish(0, OutputStream::kStdout);
  EXPECT_EQ(slurp(out_path_),
            "[1]<stdout>:world\n[0]<stdout>:hello\n[1]<stdout>:second line\n[0]<stdout>:no newline "
            "at the end\n");
  EXPECT_EQ(slurp(err_path_), "[1]<stderr>:oops\n");
}

TEST_F(OutputMuxTest, ByteByByteInterleavingStillGivesWholeLines) {
  OutputMux mux(out_.get(), err_.get(), OutputOptions{}, 3);
  std::string lines[3];
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 20; ++i)
      lines[r] += "rank " + std::to_string(r) + " line " + std::to_string(i) + "\n";
  for (size_t pos = 0; pos < lines[0].size() + 10; ++pos)
    for (int r = 0; r < 3; ++r)
      if (pos < lines[r].size())
        mux.add(r, OutputStream::kStdout, std::string_view(&lines[r][pos], 1));
  std::stringstream text(slurp(out_path_));
  std::string line;
  int count = 0;
  while (std::getline(text, line)) {
    ++count;
    ASSERT_EQ(line.substr(0, 1), "[");
    int rank = line[1] - '0';
    EXPECT_EQ(line.substr(3, 9), "<stdout>:");
    EXPECT_EQ(line.substr(12, 7), "rank " + std::to_string(rank) + " ") << line;
  }
  EXPECT_EQ(count, 60);
}

TEST_F(OutputMuxTest, TimestampsPrefixTheTag) {
  OutputOptions options;
  options.timestamps = true;
  OutputMux mux(out_.get(), err_.get(), options, 1,
                [] { return std::string("Mon Nov 21 12:34:56 2026"); });
  mux.add(0, OutputStream::kStdout, "x\n");
  EXPECT_EQ(slurp(out_path_), "Mon Nov 21 12:34:56 2026[0]<stdout>:x\n");
}

TEST_F(OutputMuxTest, UntaggedPassesLinesThrough) {
  OutputOptions options;
  options.tagged = false;
  OutputMux mux(out_.get(), err_.get(), options, 1);
  mux.add(0, OutputStream::kStdout, "plain\n");
  EXPECT_EQ(slurp(out_path_), "plain\n");
}

TEST_F(OutputMuxTest, OverlongLinesAreCutAtTheLimit) {
  OutputMux mux(out_.get(), err_.get(), OutputOptions{}, 1);
  std::string big(OutputMux::kMaxLineBytes + 10, 'a');
  mux.add(0, OutputStream::kStdout, big);
  mux.finish(0, OutputStream::kStdout);
  std::string text = slurp(out_path_);
  EXPECT_EQ(text.size(), big.size() + 2 * (12 + 1));  // two tagged lines
  EXPECT_EQ(text.substr(0, 12), "[0]<stdout>:");
}

TEST_F(OutputMuxTest, PerRankFilesGetTheRawLines) {
  OutputOptions options;
  options.directory = dir_ + ".d";
  {
    OutputMux mux(out_.get(), err_.get(), options, 2);
    mux.add(1, OutputStream::kStdout, "one\n");
    mux.add(1, OutputStream::kStderr, "two\n");
    mux.add(0, OutputStream::kStdout, "zero\n");
  }
  EXPECT_EQ(slurp(options.directory + "/rank.1/stdout"), "one\n");
  EXPECT_EQ(slurp(options.directory + "/rank.1/stderr"), "two\n");
  EXPECT_EQ(slurp(options.directory + "/rank.0/stdout"), "zero\n");
  EXPECT_EQ(slurp(options.directory + "/rank.0/stderr"), "");
  EXPECT_EQ(slurp(out_path_), "[1]<stdout>:one\n[0]<stdout>:zero\n");
}

}  // namespace
}  // namespace kolo::runner

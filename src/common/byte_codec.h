// Byte-level encoding shared by the wire formats (store frames, negotiation
// messages): big-endian integers and length-prefixed byte strings, and a
// reader that checks every length against the bytes left, so a malformed or
// hostile input becomes an error message, never an out-of-bounds read.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kolo::codec {

using Bytes = std::vector<uint8_t>;

class Writer {
 public:
  explicit Writer(size_t reserve = 0) { out_.reserve(reserve); }
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
  void raw(std::span<const uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void blob(std::span<const uint8_t> bytes) {
    u32(static_cast<uint32_t>(bytes.size()));
    raw(bytes);
  }
  void blob(std::string_view text) {
    blob(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  Bytes take() { return std::move(out_); }

 private:
  void put(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  Bytes out_;
};

// Reads what Writer wrote. The first failure sticks and later reads return
// zeros, so callers check ok() once at the end.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t left() const { return in_.size() - pos_; }

  uint8_t u8() { return static_cast<uint8_t>(get(1, "u8")); }
  uint32_t u32() { return static_cast<uint32_t>(get(4, "u32")); }
  uint64_t u64() { return get(8, "u64"); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  double f64() { return std::bit_cast<double>(u64()); }
  Bytes blob(const char* what) {
    uint32_t n = u32();
    if (!ok()) return {};
    if (n > left()) {
      fail(std::string(what) + " claims " + std::to_string(n) + " bytes but only " +
           std::to_string(left()) + " remain");
      return {};
    }
    Bytes out(in_.begin() + static_cast<ptrdiff_t>(pos_),
              in_.begin() + static_cast<ptrdiff_t>(pos_ + n));
    pos_ += n;
    return out;
  }
  std::string text(const char* what) {
    Bytes bytes = blob(what);
    return std::string(bytes.begin(), bytes.end());
  }
  bool boolean(const char* what) {
    uint8_t v = u8();
    if (ok() && v > 1) fail(std::string(what) + " flag is " + std::to_string(v) + ", not 0 or 1");
    return v == 1;
  }
  // A count of items that each take at least `min_item_bytes`: checked
  // against the bytes left, so a forged count cannot make the caller
  // reserve gigabytes.
  uint32_t count(const char* what, size_t min_item_bytes) {
    uint32_t n = u32();
    if (ok() && static_cast<uint64_t>(n) * min_item_bytes > left()) {
      fail(std::string(what) + " count " + std::to_string(n) + " exceeds the " +
           std::to_string(left()) + " bytes left");
      return 0;
    }
    return n;
  }
  // Trailing bytes mean the two sides disagree about the format.
  void expect_end() {
    if (ok() && left() != 0) fail(std::to_string(left()) + " unexpected trailing bytes");
  }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }

 private:
  uint64_t get(size_t bytes, const char* what) {
    if (!ok()) return 0;
    if (left() < bytes) {
      fail(std::string("truncated: need ") + std::to_string(bytes) + " bytes for a " + what +
           ", have " + std::to_string(left()));
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | in_[pos_ + i];
    pos_ += bytes;
    return v;
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace kolo::codec

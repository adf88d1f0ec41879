#include "reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/half.h"

namespace kolo::testing {
namespace {

template <typename T>
T load_as(const Bytes& data, size_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store_as(Bytes& data, size_t i, T v) {
  std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t truncate_saturate(DataType type, double v) {
  if (std::isnan(v)) return 0;
  double r = std::trunc(v);
  double lo = 0, hi = 0;
  switch (type) {
    case DataType::kUInt8:
      lo = 0, hi = 255;
      break;
    case DataType::kInt8:
      lo = -128, hi = 127;
      break;
    case DataType::kInt16:
      lo = -32768, hi = 32767;
      break;
    case DataType::kInt32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    default:
      if (r >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      if (r < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(r);
  }
  return static_cast<int64_t>(std::clamp(r, lo, hi));
}

}  // namespace

bool is_integer(DataType type) {
  return !is_floating(type) && type != DataType::kBool;
}

size_t element_count(DataType type, const Bytes& data) {
  return data.size() / dtype_size(type);
}

int64_t load_int(DataType type, const Bytes& data, size_t i) {
  switch (type) {
    case DataType::kUInt8:
      return load_as<uint8_t>(data, i);
    case DataType::kInt8:
      return load_as<int8_t>(data, i);
    case DataType::kInt16:
      return load_as<int16_t>(data, i);
    case DataType::kInt32:
      return load_as<int32_t>(data, i);
    case DataType::kInt64:
      return load_as<int64_t>(data, i);
    case DataType::kBool:
      return load_as<uint8_t>(data, i) != 0;
    default:
      return static_cast<int64_t>(load_float(type, data, i));
  }
}

void store_int(DataType type, Bytes& data, size_t i, int64_t value) {
  switch (type) {
    case DataType::kUInt8:
      return store_as(data, i, static_cast<uint8_t>(value));
    case DataType::kInt8:
      return store_as(data, i, static_cast<int8_t>(value));
    case DataType::kInt16:
      return store_as(data, i, static_cast<int16_t>(value));
    case DataType::kInt32:
      return store_as(data, i, static_cast<int32_t>(value));
    case DataType::kInt64:
      return store_as(data, i, value);
    case DataType::kBool:
      return store_as(data, i, static_cast<uint8_t>(value != 0));
    default:
      return store_float(type, data, i, static_cast<double>(value));
  }
}

double load_float(DataType type, const Bytes& data, size_t i) {
  switch (type) {
    case DataType::kFloat16:
      return float16::from_bits(load_as<uint16_t>(data, i)).to_float();
    case DataType::kBFloat16:
      return bfloat16::from_bits(load_as<uint16_t>(data, i)).to_float();
    case DataType::kFloat32:
      return load_as<float>(data, i);
    case DataType::kFloat64:
      return load_as<double>(data, i);
    default:
      return static_cast<double>(load_int(type, data, i));
  }
}

void store_float(DataType type, Bytes& data, size_t i, double value) {
  switch (type) {
    case DataType::kFloat16:
      return store_as(data, i, float16::from_float(static_cast<float>(value)).bits);
    case DataType::kBFloat16:
      return store_as(data, i, bfloat16::from_float(static_cast<float>(value)).bits);
    case DataType::kFloat32:
      return store_as(data, i, static_cast<float>(value));
    case DataType::kFloat64:
      return store_as(data, i, value);
    default:
      return store_int(type, data, i, static_cast<int64_t>(value));
  }
}

void reference_combine(DataType type, ReduceOp op, Bytes& acc, const Bytes& in, size_t i) {
  if (type == DataType::kBool) {
    const bool a = load_int(type, acc, i) != 0, b = load_int(type, in, i) != 0;
    const bool either = op == ReduceOp::kSum || op == ReduceOp::kMax || op == ReduceOp::kBitOr;
    return store_int(type, acc, i, either ? (a || b) : (a && b));
  }
  if (is_integer(type)) {
    const int64_t a = load_int(type, acc, i), b = load_int(type, in, i);
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    int64_t r = 0;
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAverage:
        r = static_cast<int64_t>(ua + ub);
        break;  // wraps on store
      case ReduceOp::kProduct:
        r = static_cast<int64_t>(ua * ub);
        break;
      case ReduceOp::kMin:
        r = std::min(a, b);
        break;
      case ReduceOp::kMax:
        r = std::max(a, b);
        break;
      case ReduceOp::kBitAnd:
        r = a & b;
        break;
      case ReduceOp::kBitOr:
        r = a | b;
        break;
      case ReduceOp::kAdasum:
        break;  // not elementwise and not for integers: adasum_test.cc
    }
    return store_int(type, acc, i, r);
  }
  const double a = load_float(type, acc, i), b = load_float(type, in, i);
  double r = 0;
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      r = a + b;
      break;
    case ReduceOp::kProduct:
      r = a * b;
      break;
    case ReduceOp::kMin:
      r = std::min(a, b);
      break;
    case ReduceOp::kMax:
      r = std::max(a, b);
      break;
    default:
      break;
  }
  // 16-bit types: the spec's "widen to float, combine, round once".
  if (type != DataType::kFloat64) r = static_cast<float>(r);
  store_float(type, acc, i, r);
}

void reference_scale(DataType type, Bytes& data, double factor) {
  if (factor == 1.0) return;
  for (size_t i = 0; i < element_count(type, data); ++i) {
    if (type == DataType::kBool) {
      store_int(type, data, i, load_int(type, data, i) != 0 && factor != 0.0);
    } else if (is_integer(type)) {
      store_int(type, data, i,
                truncate_saturate(type, static_cast<double>(load_int(type, data, i)) * factor));
    } else if (type == DataType::kFloat64) {
      store_float(type, data, i, load_float(type, data, i) * factor);
    } else {
      const float v = static_cast<float>(load_float(type, data, i)) * static_cast<float>(factor);
      store_float(type, data, i, v);
    }
  }
}

Bytes reference_reduce(DataType type, ReduceOp op, const std::vector<Bytes>& inputs,
                       double prescale, double postscale) {
  Bytes acc = inputs.at(0);
  reference_scale(type, acc, prescale);
  for (size_t r = 1; r < inputs.size(); ++r) {
    Bytes in = inputs[r];
    reference_scale(type, in, prescale);
    for (size_t i = 0; i < element_count(type, acc); ++i) reference_combine(type, op, acc, in, i);
  }
  if (op == ReduceOp::kAverage) postscale /= static_cast<double>(inputs.size());
  reference_scale(type, acc, postscale);
  return acc;
}

Bytes make_input(DataType type, ReduceOp op, size_t count, int rank, uint64_t salt) {
  Bytes data(count * dtype_size(type));
  const uint64_t seed = mix(salt * 1000003u + static_cast<uint64_t>(rank));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t h = mix(seed + i);
    if (type == DataType::kBool) {
      // Mostly true for "and"-like ops, mostly false for "or"-like, so the
      // result depends on every rank.
      const bool and_like =
          op == ReduceOp::kProduct || op == ReduceOp::kMin || op == ReduceOp::kBitAnd;
      store_int(type, data, i, and_like ? (h % 6 != 0) : (h % 6 == 0));
      continue;
    }
    int64_t v = 0;
    switch (op) {
      case ReduceOp::kProduct: {
        static constexpr int64_t kFactors[] = {1, 2, -1, 1};
        v = kFactors[h % 4];
        break;
      }
      case ReduceOp::kBitAnd:
      case ReduceOp::kBitOr:
        v = static_cast<int64_t>(h);
        break;
      default:
        v = static_cast<int64_t>(h % 9) - 4;
        break;
    }
    store_int(type, data, i, v);
  }
  return data;
}

Bytes make_bytes(size_t bytes, int rank, uint64_t salt) {
  Bytes data(bytes);
  const uint64_t seed = mix(salt * 1000003u + static_cast<uint64_t>(rank) + 7);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = static_cast<uint8_t>(mix(seed + i / 8) >> (8 * (i % 8)));
  return data;
}

namespace {

std::string compare_impl(DataType type, const Bytes& expected, const Bytes& actual,
                         double tolerance) {
  if (expected.size() != actual.size())
    return fmt::format("size {} != expected {}", actual.size(), expected.size());
  std::string out;
  int shown = 0, wrong = 0;
  const size_t element = dtype_size(type);
  for (size_t i = 0; i < element_count(type, expected); ++i) {
    // Integers (and bool, which must be exactly 0 or 1) compare as raw bytes;
    // floats by value, so -0 equals +0.
    bool same = std::memcmp(&expected[i * element], &actual[i * element], element) == 0;
    if (!same && is_floating(type)) {
      const double x = load_float(type, expected, i), y = load_float(type, actual, i);
      same =
          x == y || (tolerance > 0 && std::fabs(x - y) <= tolerance * std::max(1.0, std::fabs(x)));
    }
    if (same) continue;
    if (shown++ < 4) {
      if (is_floating(type))
        out += fmt::format(" [{}] {} != expected {};", i, load_float(type, actual, i),
                           load_float(type, expected, i));
      else
        out += fmt::format(" [{}] {} != expected {};", i,
                           type == DataType::kBool ? actual[i] : load_int(type, actual, i),
                           load_int(type, expected, i));
    }
    ++wrong;
  }
  return wrong
             ? fmt::format("{} of {} elements differ:{}", wrong, element_count(type, expected), out)
             : "";
}

}  // namespace

std::string compare(DataType type, const Bytes& expected, const Bytes& actual) {
  return compare_impl(type, expected, actual, 0);
}
std::string compare_near(DataType type, const Bytes& expected, const Bytes& actual,
                         double tolerance) {
  return compare_impl(type, expected, actual, tolerance);
}

namespace {

using Vector = std::vector<double>;

Vector adasum_pair(const Vector& a, const Vector& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  const double ca = aa >= 1e-8 ? 1 - dot / (2 * aa) : 1;
  const double cb = bb >= 1e-8 ? 1 - dot / (2 * bb) : 1;
  Vector out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = ca * a[i] + cb * b[i];
  return out;
}

// The ranks [lo, hi) combined as Horovod's tree does: each half first.
Vector adasum_tree(const std::vector<Vector>& ranks, size_t lo, size_t hi) {
  if (hi - lo == 1) return ranks[lo];
  const size_t mid = (lo + hi) / 2;
  return adasum_pair(adasum_tree(ranks, lo, mid), adasum_tree(ranks, mid, hi));
}

}  // namespace

std::vector<double> reference_adasum(const std::vector<std::vector<double>>& ranks) {
  return adasum_tree(ranks, 0, ranks.size());
}

double adasum_tolerance(DataType type) {
  switch (type) {
    case DataType::kFloat64:
      return 1e-12;
    case DataType::kFloat32:
      return 2e-6;
    case DataType::kFloat16:
      return 8e-3;
    default:
      return 4e-2;  // bfloat16: 8 bits of mantissa
  }
}

}  // namespace kolo::testing

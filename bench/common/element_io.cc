#include "common/element_io.h"

#include <cmath>
#include <cstdint>

#include "common/half.h"

namespace kolo::bench {
namespace {
template <typename T>
T* at(void* base, size_t i) {
  return static_cast<T*>(base) + i;
}
template <typename T>
const T* at(const void* base, size_t i) {
  return static_cast<const T*>(base) + i;
}
}  // namespace

void store_element(void* base, size_t i, DataType dtype, double v) {
  switch (dtype) {
    case DataType::kUInt8:
      *at<uint8_t>(base, i) = static_cast<uint8_t>(std::llround(v));
      break;
    case DataType::kInt8:
      *at<int8_t>(base, i) = static_cast<int8_t>(std::llround(v));
      break;
    case DataType::kInt16:
      *at<int16_t>(base, i) = static_cast<int16_t>(std::llround(v));
      break;
    case DataType::kInt32:
      *at<int32_t>(base, i) = static_cast<int32_t>(std::llround(v));
      break;
    case DataType::kInt64:
      *at<int64_t>(base, i) = std::llround(v);
      break;
    case DataType::kFloat16:
      *at<float16>(base, i) = float16::from_float(static_cast<float>(v));
      break;
    case DataType::kBFloat16:
      *at<bfloat16>(base, i) = bfloat16::from_float(static_cast<float>(v));
      break;
    case DataType::kFloat32:
      *at<float>(base, i) = static_cast<float>(v);
      break;
    case DataType::kFloat64:
      *at<double>(base, i) = v;
      break;
    case DataType::kBool:
      *at<uint8_t>(base, i) = v != 0 ? 1 : 0;
      break;
  }
}

double load_element(const void* base, size_t i, DataType dtype) {
  switch (dtype) {
    case DataType::kUInt8:
      return *at<uint8_t>(base, i);
    case DataType::kInt8:
      return *at<int8_t>(base, i);
    case DataType::kInt16:
      return *at<int16_t>(base, i);
    case DataType::kInt32:
      return *at<int32_t>(base, i);
    case DataType::kInt64:
      return static_cast<double>(*at<int64_t>(base, i));
    case DataType::kFloat16:
      return at<float16>(base, i)->to_float();
    case DataType::kBFloat16:
      return at<bfloat16>(base, i)->to_float();
    case DataType::kFloat32:
      return *at<float>(base, i);
    case DataType::kFloat64:
      return *at<double>(base, i);
    case DataType::kBool:
      return *at<uint8_t>(base, i) != 0 ? 1 : 0;
  }
  return 0;
}

}  // namespace kolo::bench

// Serial reference semantics for the collectives tests, written directly
// from the spec (not from the kernels): typed element access, one reduction
// step, scaling, and deterministic inputs whose reductions are exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kolo/types.h"

namespace kolo::testing {

// Every dtype and every reduction, for the test matrices.
constexpr DataType kAllTypes[] = {DataType::kUInt8,    DataType::kInt8,    DataType::kInt16,
                                  DataType::kInt32,    DataType::kInt64,   DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
                                  DataType::kBool};
constexpr ReduceOp kAllOps[] = {ReduceOp::kSum,  ReduceOp::kAverage, ReduceOp::kMin,
                                ReduceOp::kMax,  ReduceOp::kProduct, ReduceOp::kBitAnd,
                                ReduceOp::kBitOr};

using Bytes = std::vector<uint8_t>;

// Elements are read as int64 (integers: sign- or zero-extended; bool: 0/1
// for zero/nonzero) or as double (floating types).
bool is_integer(DataType type);  // excludes bool
int64_t load_int(DataType type, const Bytes& data, size_t i);
void store_int(DataType type, Bytes& data, size_t i, int64_t value);  // wraps
double load_float(DataType type, const Bytes& data, size_t i);
void store_float(DataType type, Bytes& data, size_t i, double value);  // rounds
size_t element_count(DataType type, const Bytes& data);

// a (op) b for one element, rounded/wrapped to the type; kAverage as kSum.
void reference_combine(DataType type, ReduceOp op, Bytes& acc, const Bytes& in, size_t i);
// Multiplies every element by factor (float for 16/32-bit floats, double
// otherwise; integers rounded to nearest, ties to even, saturated).
void reference_scale(DataType type, Bytes& data, double factor);

// Reduction of inputs[0..n) in rank order, each prescaled, the result
// postscaled (kAverage: by postscale / n).
Bytes reference_reduce(DataType type, ReduceOp op, const std::vector<Bytes>& inputs,
                       double prescale = 1.0, double postscale = 1.0);

// Adasum of the ranks' vectors, serially from the formula in double:
// adasum(a, b) = (1 - a.b / (2|a|^2)) a + (1 - a.b / (2|b|^2)) b, where a
// coefficient stays 1 for a squared norm below 1e-8, over Horovod's tree
// (each half of the ranks first).
std::vector<double> reference_adasum(const std::vector<std::vector<double>>& ranks);
// How far Adasum's result may be from the reference, relative to the
// largest expected element: a few levels of rounding in the type.
double adasum_tolerance(DataType type);

// Deterministic input of `count` elements for `rank`, chosen for `op` so
// every reduction over up to 8 ranks is exact in every type (after integer
// wraparound): small integers for sum/min/max, {1, 2, -1} for product, full
// bit patterns for bitwise ops, 0/1 for bool.
Bytes make_input(DataType type, ReduceOp op, size_t count, int rank, uint64_t salt);

// Arbitrary bytes for data-movement collectives (allgather, broadcast, ...).
Bytes make_bytes(size_t bytes, int rank, uint64_t salt);

// "" when equal, else a description of the first differences.
std::string compare(DataType type, const Bytes& expected, const Bytes& actual);
// As compare(), allowing a relative error of `tolerance` for floats.
std::string compare_near(DataType type, const Bytes& expected, const Bytes& actual,
                         double tolerance);

}  // namespace kolo::testing

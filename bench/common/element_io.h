// Reads and writes single elements of any Kolo dtype as double, for filling
// benchmark inputs and checking outputs (not for hot loops).
#pragma once

#include <cstddef>

#include "kolo/types.h"

namespace kolo::bench {

void store_element(void* base, size_t index, DataType dtype, double value);
double load_element(const void* base, size_t index, DataType dtype);

}  // namespace kolo::bench

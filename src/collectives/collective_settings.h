// The algorithms' choices and switch points from the job's settings
// (KOLO_ALLREDUCE_ALGORITHM, KOLO_RING_CHUNK_BYTES, ...; settings/table.h).
#pragma once

#include "collectives/options.h"
#include "common/settings/values.h"

namespace kolo::collectives {

CollectiveOptions collective_options_from(const settings::Values& values);

}  // namespace kolo::collectives

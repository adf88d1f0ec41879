// The shared-memory transport's options from the job's settings
// (KOLO_SHM, KOLO_SHM_SLOT_BYTES, ...; settings/table.h lists them).
#pragma once

#include "common/settings/values.h"
#include "transport/shm/shm_options.h"

namespace kolo::transport::shm {

ShmOptions shm_options_from(const settings::Values& values);

}  // namespace kolo::transport::shm

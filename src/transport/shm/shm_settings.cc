#include "transport/shm/shm_settings.h"

namespace kolo::transport::shm {

ShmOptions shm_options_from(const settings::Values& v) {
  ShmOptions shm;
  shm.enabled = v.boolean("KOLO_SHM");
  shm.slot_bytes = v.bytes("KOLO_SHM_SLOT_BYTES");
  shm.spin = std::chrono::microseconds(v.integer("KOLO_SHM_SPIN_MICROSECONDS"));
  // A local peer is waited for as long as a remote one.
  shm.op_timeout = v.duration<std::chrono::milliseconds>("KOLO_TIMEOUT_SECONDS");
  const std::string& single_copy = v.text("KOLO_SHM_SINGLE_COPY");
  shm.single_copy = single_copy == "1"   ? SingleCopy::kOn
                    : single_copy == "0" ? SingleCopy::kOff
                                         : SingleCopy::kAuto;
  shm.single_copy_bytes = v.bytes("KOLO_SHM_SINGLE_COPY_BYTES");
  shm.streaming_bytes = v.bytes("KOLO_SHM_STREAMING_BYTES");
  return shm;
}

}  // namespace kolo::transport::shm

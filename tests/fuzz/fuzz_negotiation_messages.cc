// Fuzzes the decoders of the engine's negotiation messages (request lists
// that ranks send the coordinator, response lists it broadcasts). The first
// byte picks the decoder. Any input must either decode or raise
// InternalError; whatever decodes must re-encode to the same bytes (the
// format is canonical), so no field is silently dropped or altered.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "core/message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      auto requests = kolo::core::decode_requests(bytes);
      if (kolo::core::encode_requests(requests) != bytes) std::abort();
    } else {
      auto list = kolo::core::decode_response_list(bytes);
      if (kolo::core::encode_response_list(list) != bytes) std::abort();
    }
  } catch (const kolo::InternalError&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}

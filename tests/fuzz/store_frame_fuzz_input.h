// The input format of fuzz_store_frame, shared with the seed writer: the
// bytes a server reads from one connection. A client hello comes first; its
// nonce, with a fixed secret and a zero server nonce, gives the key the
// frames after it are signed with, so seeds reach past the MAC check.
#pragma once

#include <string_view>

#include "rendezvous/store_auth.h"

namespace kolo::rendezvous::fuzz {

inline constexpr std::string_view kSecret = "fuzz-secret";
inline constexpr size_t kMaxFrameBytes = size_t{1} << 20;

inline SessionKey frame_key(const Nonce& client_nonce) {
  return derive_session_keys(kSecret, Nonce{}, client_nonce).client_to_server;
}

}  // namespace kolo::rendezvous::fuzz

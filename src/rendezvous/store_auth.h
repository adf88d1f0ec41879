// store_auth: the cryptography of the TCP store. Both ends share a per-job
// secret (KOLO_SECRET, made by generate_secret() in the launcher) and each
// connection derives its own keys from it and two fresh nonces, so a frame
// recorded on one connection is worthless on any other.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kolo::rendezvous {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;
using SessionKey = std::array<uint8_t, kMacBytes>;

// A fresh job secret: 32 bytes from the OpenSSL CSPRNG, as 64 hex digits
// (safe in environment variables and command lines).
std::string generate_secret();

// 32 bytes from the CSPRNG; throws InternalError if it is unavailable.
Nonce random_nonce();

// One key per direction, so a request can never be reflected back as a reply.
struct SessionKeys {
  SessionKey client_to_server;
  SessionKey server_to_client;
};

// keys = HMAC(secret, label || server_nonce || client_nonce) per direction.
SessionKeys derive_session_keys(std::string_view secret, const Nonce& server_nonce,
                                const Nonce& client_nonce);

Mac compute_mac(const SessionKey& key, std::span<const uint8_t> data);

// Constant-time comparison, so timing leaks nothing about the expected MAC.
bool mac_matches(const SessionKey& key, std::span<const uint8_t> data,
                 std::span<const uint8_t> mac);

}  // namespace kolo::rendezvous

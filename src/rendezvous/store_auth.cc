#include "rendezvous/store_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <climits>
#include <vector>

#include "common/check.h"
#include "common/error.h"

namespace kolo::rendezvous {
namespace {

constexpr std::string_view kClientToServerLabel = "kolo-store-v1 client-to-server";
constexpr std::string_view kServerToClientLabel = "kolo-store-v1 server-to-client";

void fill_random(std::span<uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1)
    throw InternalError("OpenSSL RAND_bytes failed: no secure random numbers available");
}

Mac hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> data) {
  KOLO_CHECK_LE(key.size(), static_cast<size_t>(INT_MAX));
  Mac out{};
  unsigned int out_len = 0;
  // HMAC() is OpenSSL 3's non-deprecated one-shot API. A null key pointer
  // with length 0 would be read as "reuse the previous key", so never pass one.
  static constexpr uint8_t kEmpty = 0;
  const uint8_t* key_ptr = key.empty() ? &kEmpty : key.data();
  if (HMAC(EVP_sha256(), key_ptr, static_cast<int>(key.size()), data.data(), data.size(),
           out.data(), &out_len) == nullptr ||
      out_len != out.size())
    throw InternalError("OpenSSL HMAC-SHA256 failed");
  return out;
}

SessionKey derive_one(std::string_view secret, std::string_view label, const Nonce& server_nonce,
                      const Nonce& client_nonce) {
  std::vector<uint8_t> input(label.begin(), label.end());
  input.insert(input.end(), server_nonce.begin(), server_nonce.end());
  input.insert(input.end(), client_nonce.begin(), client_nonce.end());
  auto secret_bytes = std::span(reinterpret_cast<const uint8_t*>(secret.data()), secret.size());
  return hmac_sha256(secret_bytes, input);
}

}  // namespace

std::string generate_secret() {
  std::array<uint8_t, 32> raw{};
  fill_random(raw);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (uint8_t b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  OPENSSL_cleanse(raw.data(), raw.size());
  return out;
}

Nonce random_nonce() {
  Nonce nonce{};
  fill_random(nonce);
  return nonce;
}

SessionKeys derive_session_keys(std::string_view secret, const Nonce& server_nonce,
                                const Nonce& client_nonce) {
  return SessionKeys{derive_one(secret, kClientToServerLabel, server_nonce, client_nonce),
                     derive_one(secret, kServerToClientLabel, server_nonce, client_nonce)};
}

Mac compute_mac(const SessionKey& key, std::span<const uint8_t> data) {
  return hmac_sha256(key, data);
}

bool mac_matches(const SessionKey& key, std::span<const uint8_t> data,
                 std::span<const uint8_t> mac) {
  if (mac.size() != kMacBytes) return false;
  Mac expected = compute_mac(key, data);
  return CRYPTO_memcmp(expected.data(), mac.data(), kMacBytes) == 0;
}

}  // namespace kolo::rendezvous

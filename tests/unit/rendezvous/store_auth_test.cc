#include "rendezvous/store_auth.h"

#include <gtest/gtest.h>

#include <cctype>

namespace kolo::rendezvous {
namespace {

TEST(StoreAuth, GeneratedSecretsAre64HexDigitsAndDiffer) {
  std::string a = generate_secret();
  std::string b = generate_secret();
  ASSERT_EQ(a.size(), 64u);
  for (char c : a) EXPECT_TRUE(std::isxdigit(static_cast<unsigned char>(c))) << a;
  EXPECT_NE(a, b);
}

TEST(StoreAuth, SessionKeysDependOnSecretBothNoncesAndDirection) {
  Nonce s = random_nonce();
  Nonce c = random_nonce();
  SessionKeys keys = derive_session_keys("secret", s, c);
  EXPECT_NE(keys.client_to_server, keys.server_to_client);
  EXPECT_EQ(keys.client_to_server, derive_session_keys("secret", s, c).client_to_server);
  EXPECT_NE(keys.client_to_server, derive_session_keys("secreT", s, c).client_to_server);
  EXPECT_NE(keys.client_to_server, derive_session_keys("secret", c, s).client_to_server);
  EXPECT_NE(keys.client_to_server,
            derive_session_keys("secret", s, random_nonce()).client_to_server);
}

TEST(StoreAuth, MacMatchesOnlyTheSameKeyAndBytes) {
  SessionKeys keys = derive_session_keys("secret", random_nonce(), random_nonce());
  std::vector<uint8_t> data = {1, 2, 3, 0, 5};
  Mac mac = compute_mac(keys.client_to_server, data);
  EXPECT_TRUE(mac_matches(keys.client_to_server, data, mac));
  EXPECT_FALSE(mac_matches(keys.server_to_client, data, mac));
  data[3] = 4;
  EXPECT_FALSE(mac_matches(keys.client_to_server, data, mac));
  EXPECT_FALSE(mac_matches(keys.client_to_server, data, std::span(mac).first(31)));
}

TEST(StoreAuth, KnownHmacSha256Vector) {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  SessionKey key{};
  // compute_mac takes a 32-byte key; check the primitive through a key made
  // of "Jefe" padded with zeros, which HMAC treats identically to "Jefe".
  key[0] = 'J';
  key[1] = 'e';
  key[2] = 'f';
  key[3] = 'e';
  std::string text = "what do ya want for nothing?";
  Mac mac = compute_mac(key, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  const uint8_t expected[] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24,
                              0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27,
                              0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
  EXPECT_TRUE(std::equal(mac.begin(), mac.end(), std::begin(expected)));
}

}  // namespace
}  // namespace kolo::rendezvous

// What rank 0 of an MPI-launched job sends the others about its store
// (store_offer.h): the text survives the trip, errors of several lines
// included, and the addresses come in the order the others should try them.
#include "core/launch/store_offer.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace kolo::launch {
namespace {

TEST(StoreOffer, SurvivesEncodingWithAFreshSecret) {
  const StoreOffer sent{{"10.0.0.2", "192.168.1.5", "127.0.0.1"}, 41234, "ab12", ""};
  const StoreOffer got = decode_offer(encode_offer(sent));
  EXPECT_EQ(got.addresses, sent.addresses);
  EXPECT_EQ(got.port, 41234);
  EXPECT_EQ(got.secret, "ab12");
  EXPECT_EQ(got.error, "");
}

TEST(StoreOffer, AnErrorOfSeveralLinesArrivesWhole) {
  StoreOffer sent;
  sent.error = "could not bind\nport 80: permission denied";
  const StoreOffer got = decode_offer(encode_offer(sent));
  EXPECT_EQ(got.error, sent.error);
  EXPECT_TRUE(got.addresses.empty());
}

TEST(StoreOffer, TextThatIsNoOfferIsABug) {
  EXPECT_THROW(decode_offer(""), InternalError);
  EXPECT_THROW(decode_offer("hello\n1\n\n10.0.0.1\n"), InternalError);
  EXPECT_THROW(decode_offer("kolo-store-offer-1\n70000\n\n10.0.0.1\n"), InternalError);
  // No address and no error: nobody could connect, and nobody would say why.
  EXPECT_THROW(decode_offer("kolo-store-offer-1\n5000\n\n\n"), InternalError);
}

const std::vector<net::InterfaceAddress> kInterfaces = {
    {"lo", "127.0.0.1", false, true, true},    {"decoy0", "198.51.100.1", false, true, false},
    {"eth0", "10.0.0.2", false, true, false},  {"eth0", "fe80::1", true, true, false},
    {"eth1", "10.9.9.9", false, false, false},  // down
    {"eth0", "10.0.0.3", false, true, false},
};

TEST(StoreOffer, EveryUpNonLoopbackAddressInTheKernelsOrderThenLoopback) {
  EXPECT_EQ(advertised_addresses(kInterfaces, ""),
            (std::vector<std::string>{"198.51.100.1", "10.0.0.2", "10.0.0.3", "127.0.0.1"}));
}

TEST(StoreOffer, TheNetworkInterfaceSettingNamesTheOnlyAddresses) {
  EXPECT_EQ(advertised_addresses(kInterfaces, "eth0"),
            (std::vector<std::string>{"10.0.0.2", "10.0.0.3"}));
  try {
    advertised_addresses(kInterfaces, "ib0");
    FAIL() << "offered addresses of an interface rank 0 does not have";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'ib0' (KOLO_IFACE) not found"), std::string::npos) << what;
    EXPECT_NE(what.find("eth0 (10.0.0.2)"), std::string::npos) << what;
  }
}

TEST(StoreOffer, AHostWithNoAddressAtAllStillOffersLoopback) {
  EXPECT_EQ(advertised_addresses({}, ""), std::vector<std::string>{"127.0.0.1"});
}

}  // namespace
}  // namespace kolo::launch

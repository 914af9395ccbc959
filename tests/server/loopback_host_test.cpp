// server::is_loopback_host: which --host values only this machine reaches
// (serve --allow-paths without a folder is refused on the others).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/loopback_host.h"

namespace {

TEST(LoopbackHost, OnlyAddressesThisMachineAloneReaches) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"127.0.0.1", true},
      {"127.1.2.3", true},  // all of 127.0.0.0/8
      {"::1", true},
      {"::ffff:127.0.0.1", true},
      {"0.0.0.0", false},  // every interface
      {"::", false},
      {"10.0.0.1", false},
      {"128.0.0.1", false},
      {"::ffff:10.0.0.1", false},
      {"", false},
      {"127.lab.example.com", false},  // a name, not an address: not loopback by its first label
      {"not a host", false},
  };
  for (const auto& [host, loopback] : cases) EXPECT_EQ(trainplan::server::is_loopback_host(host), loopback) << host;
}

}  // namespace

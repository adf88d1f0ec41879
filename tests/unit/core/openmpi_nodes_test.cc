// openmpi_node_name: the node a rank's daemon runs on, as mpirun names it,
// from the variables OpenMPI 4.1's daemons set (the first case was captured
// from `mpirun -H 198.19.0.2:2,198.19.0.3:2` started on host "vm").
#include "core/launch/openmpi_nodes.h"

#include <gtest/gtest.h>

namespace kolo::launch {
namespace {

using Names = std::vector<std::string>;

TEST(OpenMpiNodes, NamesAsTheUserGaveThem) {
  const std::string regex = "vm,[3:198].19.0.2,[3:198].19.0.3@0(3)";
  EXPECT_EQ(openmpi_node_names("vm,[3:198].19.0.2,[3:198].19.0.3"),
            (Names{"vm", "198.19.0.2", "198.19.0.3"}));
  EXPECT_EQ(openmpi_node_name(regex, "1363935232.2;tcp://198.19.0.3:58483"), "198.19.0.3");
  EXPECT_EQ(openmpi_node_name(regex, "1363935232.1;tcp://198.19.0.2:35051"), "198.19.0.2");
  EXPECT_EQ(openmpi_node_name(regex, "1363935232.0;tcp://10.0.0.1:4000"), "vm");
}

TEST(OpenMpiNodes, RangesPaddingAndNodesWithoutADaemon) {
  EXPECT_EQ(openmpi_node_names("gpu[2:7-9,12].cluster,login"),
            (Names{"gpu07.cluster", "gpu08.cluster", "gpu09.cluster", "gpu12.cluster", "login"}));
  // mpirun's own host holds no rank and has no daemon of the job: -1.
  const std::string regex = "head,node[1:1-3]@-1(1),1(3)";
  EXPECT_EQ(openmpi_node_name(regex, "5.1;tcp://x"), "node1");
  EXPECT_EQ(openmpi_node_name(regex, "5.3;tcp://x"), "node3");
  EXPECT_EQ(openmpi_node_name(regex, "5.4;tcp://x"), "") << "no such daemon";
}

TEST(OpenMpiNodes, AnotherFormGivesNoName) {
  const std::pair<std::string, std::string> unreadable[] = {{"", "1.1;tcp://x"},
                                                            {"vm@0(1)", "garbage"},
                                                            {"a[x:1]@0(1)", "1.0;tcp://x"},
                                                            {"a[2:1-@0(1)", "1.0;tcp://x"},
                                                            {"a,b@0(x)", "1.0;tcp://x"}};
  for (const auto& [regex, daemon] : unreadable)
    EXPECT_EQ(openmpi_node_name(regex, daemon), "") << regex << " " << daemon;
}

}  // namespace
}  // namespace kolo::launch

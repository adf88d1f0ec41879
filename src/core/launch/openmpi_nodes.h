// The name OpenMPI's mpirun knows a rank's node by (as the user wrote it
// in -H or the hostfile), so errors name hosts as the launcher does. A rank
// learns it from two variables mpirun's daemons set: the job's node list,
// compressed (OMPI_MCA_orte_node_regex, OpenMPI 4: "vm,[3:198].19.0.2,
// [3:198].19.0.3@0(3)": names, then "@" and the daemons' ranks by node),
// and the daemon that started the rank (OMPI_MCA_orte_local_daemon_uri,
// "<job>.<daemon rank>;<addresses>").
#pragma once

#include <string>
#include <vector>

namespace kolo::launch {

// The node names of a node list: "a[2:1-3,7]b" -> a01b a02b a03b a07b.
// Empty when the text is not such a list.
std::vector<std::string> openmpi_node_names(const std::string& list);

// The name of the node the daemon in `daemon_uri` runs on; empty when either
// variable is not in the form above (another OpenMPI version): the caller
// then keeps the machine's own name.
std::string openmpi_node_name(const std::string& node_regex, const std::string& daemon_uri);

}  // namespace kolo::launch

// Who this machine is: its host name, and an identity that tells machines
// apart where host names repeat (containers, namespaces with one UTS name).
#pragma once

#include <string>

namespace kolo {

// gethostname(), or "unknown" when it fails.
std::string local_hostname();

// "HOSTNAME BOOT_ID": two processes run on one machine (one kernel, one
// /dev/shm) exactly when their identities are equal.
std::string machine_identity();

}  // namespace kolo

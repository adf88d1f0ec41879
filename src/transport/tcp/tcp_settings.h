// The TCP transport's options from the job's settings (KOLO_IFACE,
// KOLO_TIMEOUT_SECONDS, ...; settings/table.h lists them).
#pragma once

#include "common/settings/values.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::transport::tcp {

TcpOptions tcp_options_from(const settings::Values& values);

}  // namespace kolo::transport::tcp

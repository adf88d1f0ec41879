// Checks an enqueued operation can ever run, on the caller's thread, so a
// bad call fails at once with a message that names the tensor, instead of
// after negotiation.
#pragma once

#include "core/message.h"

namespace kolo::core {

// Throws InvalidArgument. `set_size` is the size of the operation's process
// set. For alltoall, fills empty request.values with equal splits.
void validate_request(Request& request, const void* input, const void* output, int set_size);

}  // namespace kolo::core

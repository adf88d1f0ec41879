// The one spelling of a system error in Kolo's messages.
#pragma once

#include <string>

namespace kolo {

// "Connection refused (errno 111)": the text for people, the number for searching and for
// telling apart errors whose text a libc translates.
std::string errno_text(int err);

}  // namespace kolo

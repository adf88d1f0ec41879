# Warning flags for every Kolo target (third-party headers are system
# includes and stay quiet). -Wshadow=local is GCC's; clang gets -Wshadow.
add_library(kolo_warnings INTERFACE)
target_compile_options(kolo_warnings INTERFACE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                                               -Wno-unused-parameter
                                               $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                               $<$<CXX_COMPILER_ID:Clang>:-Wshadow>)
if(KOLO_WERROR)
  target_compile_options(kolo_warnings INTERFACE -Werror)
endif()

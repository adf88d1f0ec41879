# Warning flags for every Kolo target (third-party headers are system
# includes and stay quiet).
add_library(kolo_warnings INTERFACE)
target_compile_options(kolo_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow=local
                                               -Wnon-virtual-dtor -Wno-unused-parameter)
if(KOLO_WERROR)
  target_compile_options(kolo_warnings INTERFACE -Werror)
endif()

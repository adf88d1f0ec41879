# Warning flags for every Kolo target (third-party headers are system
# includes and stay quiet). -Wshadow=local is GCC's; clang gets -Wshadow.
add_library(kolo_warnings INTERFACE)
target_compile_options(kolo_warnings INTERFACE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                                               -Wno-unused-parameter
                                               $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                               $<$<CXX_COMPILER_ID:Clang>:-Wshadow>)
# Clang checks the lock annotations of common/thread_annotations.h. A broken
# lock rule is an error in every clang build, KOLO_WERROR or not, so the
# clang tree `make test` builds (build-fuzz) enforces them.
target_compile_options(kolo_warnings INTERFACE
                       $<$<CXX_COMPILER_ID:Clang>:-Wthread-safety -Werror=thread-safety>)
if(KOLO_WERROR)
  target_compile_options(kolo_warnings INTERFACE -Werror)
  # GCC 12's -O3 (Release) flow analysis reports overflows and overlaps
  # inside libstdc++'s own std::vector growth and std::string concatenation
  # that cannot happen (known GCC 12 false positives, e.g. bug 105651). They
  # stay warnings there, so a Release build with KOLO_WERROR still builds.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(kolo_warnings INTERFACE -Wno-error=restrict -Wno-error=stringop-overflow)
  endif()
endif()

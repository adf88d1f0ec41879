# kolo_add_gtest(<name> TIMEOUT <seconds> SOURCES <files...> [LIBS <layer libs>])
# LIBS defaults to the whole of libkolo; name layers to test one in isolation.
# One GoogleTest executable; each TEST becomes its own ctest entry with a
# time limit, so a hang fails that test instead of stalling the run.
find_package(GTest REQUIRED)
include(GoogleTest)

function(kolo_add_gtest name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE kolo_warnings GTest::gtest GTest::gtest_main)
  if(ARG_LIBS)
    target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  else()
    target_link_libraries(${name} PRIVATE kolo)
  endif()
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ARG_TIMEOUT})
endfunction()

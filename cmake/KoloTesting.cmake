# kolo_add_gtest(<name> TIMEOUT <seconds> SOURCES <files...>)
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
  target_link_libraries(${name} PRIVATE kolo kolo_warnings GTest::gtest GTest::gtest_main ${ARG_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ARG_TIMEOUT})
endfunction()

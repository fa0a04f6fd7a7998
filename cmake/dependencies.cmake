# Third-party dependencies: Debian packages first, then sources in LEANGRAD_DEPS_DIR (offline
# builds). Nothing is downloaded at build time.
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)  # gzipped IDX files (data/mnist.cpp)

find_package(Eigen3 3.3 QUIET NO_MODULE)
if(NOT TARGET Eigen3::Eigen)
  if(EXISTS "${LEANGRAD_DEPS_DIR}/eigen3/Eigen/Core")
    add_library(Eigen3::Eigen INTERFACE IMPORTED)
    target_include_directories(Eigen3::Eigen INTERFACE "${LEANGRAD_DEPS_DIR}/eigen3")
  else()
    message(FATAL_ERROR "Eigen 3 not found: apt-get install libeigen3-dev, "
                        "or put its headers in ${LEANGRAD_DEPS_DIR}/eigen3")
  endif()
endif()

find_package(nlohmann_json 3 QUIET)
if(NOT TARGET nlohmann_json::nlohmann_json)
  if(EXISTS "${LEANGRAD_DEPS_DIR}/nlohmann_json/include/nlohmann/json.hpp")
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
    target_include_directories(nlohmann_json::nlohmann_json INTERFACE
                               "${LEANGRAD_DEPS_DIR}/nlohmann_json/include")
  else()
    message(FATAL_ERROR "nlohmann-json not found: apt-get install nlohmann-json3-dev, "
                        "or put its include/ in ${LEANGRAD_DEPS_DIR}/nlohmann_json")
  endif()
endif()

if(LEANGRAD_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT TARGET GTest::gtest_main)
    if(EXISTS "${LEANGRAD_DEPS_DIR}/googletest/CMakeLists.txt")
      set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
      add_subdirectory("${LEANGRAD_DEPS_DIR}/googletest" "${CMAKE_BINARY_DIR}/_deps/googletest"
                       EXCLUDE_FROM_ALL SYSTEM)
    else()
      message(FATAL_ERROR "GoogleTest not found: apt-get install libgtest-dev, "
                          "or put its sources in ${LEANGRAD_DEPS_DIR}/googletest")
    endif()
  endif()
endif()

if(LEANGRAD_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
  if(NOT TARGET benchmark::benchmark)
    if(EXISTS "${LEANGRAD_DEPS_DIR}/benchmark/CMakeLists.txt")
      set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
      set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
      add_subdirectory("${LEANGRAD_DEPS_DIR}/benchmark" "${CMAKE_BINARY_DIR}/_deps/benchmark"
                       EXCLUDE_FROM_ALL SYSTEM)
    else()
      message(STATUS "Google Benchmark not found: benchmarks are not built")
      set(LEANGRAD_BUILD_BENCHMARKS OFF)
    endif()
  endif()
endif()

# CLI11 parses the command lines of the programs in tools/ (leangrad-train); header-only.
if(LEANGRAD_BUILD_TOOLS)
  find_package(CLI11 CONFIG QUIET)
  if(NOT TARGET CLI11::CLI11)
    if(EXISTS "${LEANGRAD_DEPS_DIR}/CLI11/include/CLI/CLI.hpp")
      add_library(CLI11::CLI11 INTERFACE IMPORTED)
      target_include_directories(CLI11::CLI11 INTERFACE "${LEANGRAD_DEPS_DIR}/CLI11/include")
    else()
      message(FATAL_ERROR "CLI11 not found (needed by the programs in tools/): "
                          "apt-get install libcli11-dev, or put its include/ in "
                          "${LEANGRAD_DEPS_DIR}/CLI11, or configure with -DLEANGRAD_BUILD_TOOLS=OFF")
    endif()
  endif()
endif()

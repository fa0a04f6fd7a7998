# Installs leangrad from BUILD_DIR into a scratch prefix, builds tests/consumer against it with
# find_package(leangrad), and runs the program. Invoked by CTest (tests/CMakeLists.txt).
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE result OUTPUT_QUIET)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${result})")
endif()
# Only the public headers are installed: the umbrella header, kernels/ops.h and what they include
# (cmake/install.cmake); the kernels' backend contract, launchers and geometry stay private.
foreach(private_header kernels/backend.h kernels/dispatch.h kernels/cpu/parallel_for.h
                       kernels/conv_geometry.h core/allocator_backends.h distributed/tcp_store.h)
  if(EXISTS "${prefix}/include/leangrad/${private_header}")
    message(FATAL_ERROR "the private header ${private_header} was installed")
  endif()
endforeach()
foreach(public_header leangrad.h kernels/ops.h core/tensor.h data/dataset.h)
  if(NOT EXISTS "${prefix}/include/leangrad/${public_header}")
    message(FATAL_ERROR "the public header ${public_header} was not installed")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK_DIR}/build"
                        -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring the consumer with find_package(leangrad) failed")
endif()
# A Debug consumer of the same package links the configuration that is installed.
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer"
                        -B "${WORK_DIR}/build-debug" -G "${GENERATOR}"
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Debug
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configuring a Debug consumer with find_package(leangrad) failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build-debug" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "building a Debug consumer failed")
endif()
execute_process(COMMAND "${WORK_DIR}/build-debug/consumer" RESULT_VARIABLE result
                OUTPUT_QUIET)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the Debug consumer failed (${result})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "building the consumer failed")
endif()
# The program runs on the CPU, and libleangrad records no CUDA library as needed (Note [Lazily
# loaded CUDA libraries] in kernels/cuda/cublas_lazy.cpp): so it links and runs on a machine
# without them. The loader's own log (LD_DEBUG=files) shows that none was opened; the static CUDA
# runtime may still look for the driver, libcuda.so.1, as cuda::is_available() asks.
set(ENV{LD_DEBUG} files)
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE result
                ERROR_VARIABLE loader_log)
unset(ENV{LD_DEBUG})
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the consumer program failed (${result})")
endif()
set(cuda_libraries "lib(cudart|cublas|cublasLt|cudnn|nccl)[._]")
if(loader_log MATCHES "file=${cuda_libraries}")
  string(REGEX MATCHALL "file=[^ ]*${cuda_libraries}[^ ]*" opened "${loader_log}")
  message(FATAL_ERROR "the CPU consumer opened CUDA libraries: ${opened}")
endif()
if(NOT loader_log MATCHES "file=libleangrad")
  message(FATAL_ERROR "LD_DEBUG=files shows no libleangrad: the loader log is not what this "
                      "check reads")
endif()
find_program(READELF_EXECUTABLE NAMES readelf)
if(READELF_EXECUTABLE)
  file(GLOB installed_libraries "${prefix}/lib*/libleangrad.so.*.*")
  foreach(library IN LISTS installed_libraries)
    execute_process(COMMAND "${READELF_EXECUTABLE}" -d "${library}" OUTPUT_VARIABLE dynamic
                    RESULT_VARIABLE result)
    if(NOT result EQUAL 0 OR NOT dynamic MATCHES "NEEDED")
      message(FATAL_ERROR "readelf -d ${library} failed (${result})")
    endif()
    if(dynamic MATCHES "NEEDED[^\n]*${cuda_libraries}")
      message(FATAL_ERROR "${library} needs a CUDA library at load time:\n${dynamic}")
    endif()
  endforeach()
endif()
# The installed tools start from the prefix (their RUNPATH finds libleangrad in ../lib).
foreach(tool leangrad-train leangrad-run)
  execute_process(COMMAND "${prefix}/bin/${tool}" --help RESULT_VARIABLE result
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0 OR NOT out MATCHES "Usage|usage")
    message(FATAL_ERROR "the installed ${tool} --help failed (${result}):\n${out}${err}")
  endif()
endforeach()
# The same program built with pkg-config's flags alone (no CMake package), when pkg-config is
# there: the relocatable leangrad.pc of the prefix.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
find_program(CXX_COMPILER NAMES c++ g++ clang++)
if(PKG_CONFIG_EXECUTABLE AND CXX_COMPILER)
  file(GLOB_RECURSE pc_file "${prefix}/*/leangrad.pc")
  list(LENGTH pc_file pc_count)
  if(NOT pc_count EQUAL 1)
    message(FATAL_ERROR "expected one installed leangrad.pc, found: ${pc_file}")
  endif()
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags --libs leangrad
                  OUTPUT_VARIABLE pc_flags RESULT_VARIABLE result OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs leangrad failed (${result})")
  endif()
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  execute_process(COMMAND "${CXX_COMPILER}" -I "${SOURCE_DIR}/tests/consumer/include"
                          "${SOURCE_DIR}/tests/consumer/consumer.cpp"
                          -o "${WORK_DIR}/consumer_pkg_config" ${pc_flags}
                  RESULT_VARIABLE result ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "building the consumer with pkg-config's flags failed:\n${err}")
  endif()
  execute_process(COMMAND "${WORK_DIR}/consumer_pkg_config" RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "the consumer built with pkg-config failed (${result})")
  endif()
else()
  message(STATUS "pkg-config or a C++ compiler not found: the pkg-config consumer not checked")
endif()

# `cmake --install` produces a package that find_package(leangrad) consumes:
#   <prefix>/include/leangrad/leangrad.h          the umbrella header
#   <prefix>/include/leangrad/{core,kernels,...}  the public headers: those the umbrella header
#                                                 and kernels/ops.h include, and nothing else
#   <prefix>/lib/cmake/leangrad/                  leangradConfig.cmake and the exported target
#   <prefix>/lib/pkgconfig/leangrad.pc             the same for pkg-config (Makefiles, Meson)
include(CMakePackageConfigHelpers)

# Installed programs (leangrad-train, leangrad-run, leangrad-demo) find libleangrad beside them,
# in ../lib of wherever the prefix is moved: no LD_LIBRARY_PATH needed.
if(TARGET leangrad-train)
  file(RELATIVE_PATH _lib_from_bin "/${CMAKE_INSTALL_BINDIR}" "/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(leangrad-demo leangrad-train leangrad-run PROPERTIES
    INSTALL_RPATH "$ORIGIN/${_lib_from_bin}")
endif()

install(TARGETS leangrad EXPORT leangradTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers are the umbrella header, kernels/ops.h (the kernel-level API that benchmarks
# and kernel engineers call) and every header they include, found by following their
# #include <leangrad/...> lines. The rest (the kernels' backend contract and launchers, dispatch,
# geometry, the allocator's backends, the TCP store's protocol) is the library's own business and
# is not installed, so no consumer can come to depend on it.
function(leangrad_public_headers out_var)
  set(pending ${ARGN})
  set(found "")
  while(pending)
    list(POP_FRONT pending header)
    if(header IN_LIST found)
      continue()
    endif()
    list(APPEND found "${header}")
    file(STRINGS "${PROJECT_SOURCE_DIR}/leangrad/${header}" includes
      REGEX "^[ \t]*#[ \t]*include[ \t]*<leangrad/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[^<]*<leangrad/([^>]+)>.*$" "\\1" included "${line}")
      list(APPEND pending "${included}")
    endforeach()
  endwhile()
  list(SORT found)
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

leangrad_public_headers(LEANGRAD_PUBLIC_HEADERS leangrad.h kernels/ops.h)
foreach(header IN LISTS LEANGRAD_PUBLIC_HEADERS)
  get_filename_component(header_dir "${header}" DIRECTORY)
  install(FILES "leangrad/${header}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/leangrad/${header_dir}")
endforeach()
# Headers are read at configure time: a new #include re-runs CMake.
list(TRANSFORM LEANGRAD_PUBLIC_HEADERS PREPEND "${PROJECT_SOURCE_DIR}/leangrad/"
     OUTPUT_VARIABLE _public_header_paths)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_public_header_paths})

install(EXPORT leangradTargets NAMESPACE leangrad::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leangrad)
configure_package_config_file(cmake/leangradConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/leangradConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leangrad)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/leangradConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/leangradConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/leangradConfigVersion.cmake"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/leangrad)

# pkg-config: `c++ prog.cpp $(pkg-config --cflags --libs leangrad)`. A static leangrad lists its
# private dependencies for `pkg-config --static`.
file(RELATIVE_PATH LEANGRAD_PC_PREFIX_FROM_PCDIR "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" LEANGRAD_PC_PREFIX_FROM_PCDIR "${LEANGRAD_PC_PREFIX_FROM_PCDIR}")
if(LEANGRAD_WITH_CUDA)
  set(LEANGRAD_PC_WITH_CUDA 1)
else()
  set(LEANGRAD_PC_WITH_CUDA 0)
endif()
set(LEANGRAD_PC_LIBS_PRIVATE "-fopenmp -lpthread -lz -ldl")
if(LEANGRAD_WITH_CUDA)
  # The static CUDA runtime; cuBLAS, cuDNN and NCCL are opened at run time, never linked.
  string(APPEND LEANGRAD_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
endif()
# The library of this build's configuration (a Debug build's is leangradd); a prefix holding both
# gets the .pc of the last one installed.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(LEANGRAD_PC_LIBRARY leangradd)
else()
  set(LEANGRAD_PC_LIBRARY leangrad)
endif()
configure_file(cmake/leangrad.pc.in "${CMAKE_CURRENT_BINARY_DIR}/leangrad.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/leangrad.pc"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# `cmake --install` produces a package that find_package(leangrad) consumes:
#   <prefix>/include/leangrad/leangrad.h          the umbrella header
#   <prefix>/include/leangrad/{core,kernels,...}  the headers it includes
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
install(FILES include/leangrad/leangrad.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/leangrad)
foreach(layer IN ITEMS core kernels autograd nn offload data optim distributed)
  install(DIRECTORY ${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/leangrad/${layer}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.inc"
    PATTERN "cuda" EXCLUDE PATTERN "no_cuda" EXCLUDE PATTERN "cpu" EXCLUDE
    PATTERN "gloo" EXCLUDE PATTERN "no_gloo" EXCLUDE)
endforeach()

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
set(LEANGRAD_PC_LIBS_PRIVATE "-fopenmp -lpthread -lz")
if(LEANGRAD_WITH_CUDA)
  string(APPEND LEANGRAD_PC_LIBS_PRIVATE " -lcudart -lcublas")
endif()
configure_file(cmake/leangrad.pc.in "${CMAKE_CURRENT_BINARY_DIR}/leangrad.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/leangrad.pc"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

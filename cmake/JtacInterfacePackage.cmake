# jtac_interface_package(<name>): our definitions of an interface package that is on no registry here
# (interfaces/<name>: Jazzy field lists, so type names and fields match the real package on the wire),
# built and installed into CMAKE_INSTALL_PREFIX only when no <name> package is installed there.
# An installed copy of ours carries a hash of its definitions (and of JTAC_INTERFACES_CPP) and is
# rebuilt when they change; a <name> without that marker is the real package and is used as it is.
#
# The package is an ExternalProject of this build, so `cmake --build` generates, compiles and installs
# it alongside jtac's own interfaces (jtac's interfaces do not depend on it): on 2 cores the three
# packages take about as long as the slowest one instead of their sum. Used by JtacControlMsgs.cmake
# and JtacControllerManagerMsgs.cmake.
include_guard(GLOBAL)
include(ExternalProject)

function(jtac_interface_package name)
  set(_src "${PROJECT_SOURCE_DIR}/interfaces/${name}")
  file(GLOB _files "${_src}/msg/*.msg" "${_src}/srv/*.srv" "${_src}/action/*.action" "${_src}/CMakeLists.txt"
       "${_src}/package.xml")
  list(SORT _files)
  set(_hash_input "JTAC_INTERFACES_CPP=${JTAC_INTERFACES_CPP}")
  foreach(_f IN LISTS _files)
    file(SHA256 "${_f}" _h)
    string(APPEND _hash_input "${_h}")
  endforeach()
  string(SHA256 _hash "${_hash_input}")

  list(APPEND CMAKE_PREFIX_PATH "${CMAKE_INSTALL_PREFIX}")
  find_package(${name} QUIET)
  set(_build FALSE)
  if(NOT ${name}_FOUND)
    set(_build TRUE)
    message(STATUS "jtac: no ${name} installed: building our ${name} subset")
  elseif(EXISTS "${${name}_DIR}/../jtac_definitions.sha256")
    # Our copy counts only where this build installs: one found elsewhere (another venv whose bin/ is
    # on PATH, which find_package searches) is not importable from this prefix's Python.
    file(READ "${${name}_DIR}/../jtac_definitions.sha256" _installed_hash)
    string(STRIP "${_installed_hash}" _installed_hash)
    file(REAL_PATH "${${name}_DIR}" _found_dir)
    file(REAL_PATH "${CMAKE_INSTALL_PREFIX}" _install_dir)
    string(FIND "${_found_dir}/" "${_install_dir}/" _at)
    if(NOT _at EQUAL 0)
      set(_build TRUE)
      message(STATUS "jtac: our ${name} at ${${name}_DIR} belongs to another prefix: building it into ${CMAKE_INSTALL_PREFIX}")
    elseif(NOT _installed_hash STREQUAL _hash)
      set(_build TRUE)
      message(STATUS "jtac: our installed ${name} is out of date: rebuilding it")
    endif()
  else()
    message(STATUS "jtac: using the installed ${name} at ${${name}_DIR}")
  endif()
  if(NOT _build)
    return()
  endif()

  set(_bin "${CMAKE_BINARY_DIR}/${name}")
  file(WRITE "${_bin}-marker/jtac_definitions.sha256" "${_hash}\n")
  ExternalProject_Add(jtac_${name}
    SOURCE_DIR "${_src}"
    BINARY_DIR "${_bin}"
    PREFIX "${_bin}-ep"
    CMAKE_ARGS
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_INSTALL_PREFIX=${CMAKE_INSTALL_PREFIX}"
      "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
      "-DPython3_EXECUTABLE=${Python_EXECUTABLE}"
      -DBUILD_TESTING=OFF
      "-DJTAC_INTERFACES_CPP=${JTAC_INTERFACES_CPP}"
      "-DCMAKE_PROJECT_INCLUDE=${PROJECT_SOURCE_DIR}/cmake/RosWheelsFixups.cmake"
      # Not read by the package: a new hash re-runs its configure, build and install steps.
      "-DJTAC_DEFINITIONS_SHA256=${_hash}"
    INSTALL_COMMAND "${CMAKE_COMMAND}" --install "${_bin}"
      COMMAND "${CMAKE_COMMAND}" -E copy "${_bin}-marker/jtac_definitions.sha256"
              "${CMAKE_INSTALL_PREFIX}/share/${name}/jtac_definitions.sha256"
    LOG_CONFIGURE ON LOG_BUILD ON LOG_INSTALL ON LOG_OUTPUT_ON_FAILURE ON)
  message(STATUS "jtac: ${name} is built and installed into ${CMAKE_INSTALL_PREFIX} by `cmake --build`")
endfunction()

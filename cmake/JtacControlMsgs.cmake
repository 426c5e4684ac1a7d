# control_msgs is on no registry here. When no control_msgs package is installed, build our own
# definitions (interfaces/control_msgs, Jazzy field lists, so type names and fields match the real
# package on the wire) and install them into CMAKE_INSTALL_PREFIX before jtac's interfaces.
# An installed copy of ours carries a hash of its definitions and is rebuilt when they change; a
# control_msgs without that marker is the real package and is used as it is.
set(_jtac_cm_src "${CMAKE_CURRENT_LIST_DIR}/../interfaces/control_msgs")
file(GLOB _jtac_cm_files "${_jtac_cm_src}/msg/*.msg" "${_jtac_cm_src}/action/*.action"
     "${_jtac_cm_src}/CMakeLists.txt" "${_jtac_cm_src}/package.xml")
list(SORT _jtac_cm_files)
set(_jtac_cm_hash_input "")
foreach(_f IN LISTS _jtac_cm_files)
  file(SHA256 "${_f}" _h)
  string(APPEND _jtac_cm_hash_input "${_h}")
endforeach()
string(SHA256 _jtac_cm_hash "${_jtac_cm_hash_input}")

list(APPEND CMAKE_PREFIX_PATH "${CMAKE_INSTALL_PREFIX}")
find_package(control_msgs QUIET)
set(_jtac_cm_build FALSE)
if(NOT control_msgs_FOUND)
  set(_jtac_cm_build TRUE)
  message(STATUS "jtac: no control_msgs installed: building our control_msgs subset")
else()
  set(_marker "${control_msgs_DIR}/../jtac_definitions.sha256")
  if(EXISTS "${_marker}")
    file(READ "${_marker}" _installed_hash)
    string(STRIP "${_installed_hash}" _installed_hash)
    if(NOT _installed_hash STREQUAL _jtac_cm_hash)
      set(_jtac_cm_build TRUE)
      message(STATUS "jtac: our installed control_msgs is out of date: rebuilding it")
    endif()
  else()
    message(STATUS "jtac: using the installed control_msgs at ${control_msgs_DIR}")
  endif()
endif()

if(_jtac_cm_build)
  set(_bin "${CMAKE_BINARY_DIR}/control_msgs")
  set(_cm_args
    -S "${_jtac_cm_src}" -B "${_bin}"
    -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_INSTALL_PREFIX=${CMAKE_INSTALL_PREFIX}"
    "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
    "-DPython3_EXECUTABLE=${Python_EXECUTABLE}"
    -DBUILD_TESTING=OFF
    "-DCMAKE_PROJECT_INCLUDE=${CMAKE_CURRENT_LIST_DIR}/RosWheelsFixups.cmake")
  foreach(_step IN ITEMS configure build install)
    if(_step STREQUAL "configure")
      set(_cmd "${CMAKE_COMMAND}" ${_cm_args})
    elseif(_step STREQUAL "build")
      set(_cmd "${CMAKE_COMMAND}" --build "${_bin}" --parallel)
    else()
      set(_cmd "${CMAKE_COMMAND}" --install "${_bin}")
    endif()
    execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "jtac: control_msgs ${_step} failed:\n${_out}")
    endif()
  endforeach()
  file(WRITE "${CMAKE_INSTALL_PREFIX}/share/control_msgs/jtac_definitions.sha256" "${_jtac_cm_hash}\n")
  unset(control_msgs_DIR CACHE)
  find_package(control_msgs REQUIRED)
  message(STATUS "jtac: built and installed control_msgs into ${CMAKE_INSTALL_PREFIX}")
endif()

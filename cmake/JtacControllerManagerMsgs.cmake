# controller_manager_msgs is on no registry here. When none is installed, build our own definitions
# of the subset the node serves (interfaces/controller_manager_msgs: ListControllers, SwitchController,
# ControllerState, ChainConnection; Jazzy field lists, so type names and fields match the real package
# on the wire) and install them into CMAKE_INSTALL_PREFIX, exactly as JtacControlMsgs.cmake does for
# control_msgs. An installed copy of ours carries a hash of its definitions and is rebuilt when they
# change; one without that marker is the real package and is used as it is.
set(_jtac_cmm_src "${CMAKE_CURRENT_LIST_DIR}/../interfaces/controller_manager_msgs")
file(GLOB _jtac_cmm_files "${_jtac_cmm_src}/msg/*.msg" "${_jtac_cmm_src}/srv/*.srv"
     "${_jtac_cmm_src}/CMakeLists.txt" "${_jtac_cmm_src}/package.xml")
list(SORT _jtac_cmm_files)
set(_jtac_cmm_hash_input "")
foreach(_f IN LISTS _jtac_cmm_files)
  file(SHA256 "${_f}" _h)
  string(APPEND _jtac_cmm_hash_input "${_h}")
endforeach()
string(SHA256 _jtac_cmm_hash "${_jtac_cmm_hash_input}")

list(APPEND CMAKE_PREFIX_PATH "${CMAKE_INSTALL_PREFIX}")
find_package(controller_manager_msgs QUIET)
set(_jtac_cmm_build FALSE)
if(NOT controller_manager_msgs_FOUND)
  set(_jtac_cmm_build TRUE)
  message(STATUS "jtac: no controller_manager_msgs installed: building our controller_manager_msgs subset")
else()
  set(_marker "${controller_manager_msgs_DIR}/../jtac_definitions.sha256")
  if(EXISTS "${_marker}")
    file(READ "${_marker}" _installed_hash)
    string(STRIP "${_installed_hash}" _installed_hash)
    if(NOT _installed_hash STREQUAL _jtac_cmm_hash)
      set(_jtac_cmm_build TRUE)
      message(STATUS "jtac: our installed controller_manager_msgs is out of date: rebuilding it")
    endif()
  else()
    message(STATUS "jtac: using the installed controller_manager_msgs at ${controller_manager_msgs_DIR}")
  endif()
endif()

if(_jtac_cmm_build)
  set(_bin "${CMAKE_BINARY_DIR}/controller_manager_msgs")
  set(_cmm_args
    -S "${_jtac_cmm_src}" -B "${_bin}"
    -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_INSTALL_PREFIX=${CMAKE_INSTALL_PREFIX}"
    "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
    "-DPython3_EXECUTABLE=${Python_EXECUTABLE}"
    -DBUILD_TESTING=OFF
    "-DCMAKE_PROJECT_INCLUDE=${CMAKE_CURRENT_LIST_DIR}/RosWheelsFixups.cmake")
  foreach(_step IN ITEMS configure build install)
    if(_step STREQUAL "configure")
      set(_cmd "${CMAKE_COMMAND}" ${_cmm_args})
    elseif(_step STREQUAL "build")
      set(_cmd "${CMAKE_COMMAND}" --build "${_bin}" --parallel)
    else()
      set(_cmd "${CMAKE_COMMAND}" --install "${_bin}")
    endif()
    execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "jtac: controller_manager_msgs ${_step} failed:\n${_out}")
    endif()
  endforeach()
  file(WRITE "${CMAKE_INSTALL_PREFIX}/share/controller_manager_msgs/jtac_definitions.sha256" "${_jtac_cmm_hash}\n")
  unset(controller_manager_msgs_DIR CACHE)
  find_package(controller_manager_msgs REQUIRED)
  message(STATUS "jtac: built and installed controller_manager_msgs into ${CMAKE_INSTALL_PREFIX}")
endif()

# Finds the "cmeel" prefix that the pip wheels pin / cmeel-eigen / cmeel-urdfdom-headers install
# under site-packages (Pinocchio, Eigen, Boost and urdfdom headers with their CMake configs) and
# puts it on CMAKE_PREFIX_PATH. The interpreter asked is the one that will run the module, so the
# C++ code links exactly the Pinocchio that `import pinocchio` loads.
if(NOT DEFINED JTAC_CMEEL_PREFIX)
  if(NOT Python_EXECUTABLE)
    find_package(Python 3.10 REQUIRED COMPONENTS Interpreter)
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -m cmeel cmake
    OUTPUT_VARIABLE _jtac_cmeel OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE _jtac_cmeel_rc)
  if(NOT _jtac_cmeel_rc EQUAL 0 OR NOT IS_DIRECTORY "${_jtac_cmeel}")
    message(FATAL_ERROR
      "jtac: '${Python_EXECUTABLE} -m cmeel cmake' found no cmeel prefix. "
      "Run scripts/setup.sh (it installs pin, cmeel-eigen and cmeel-urdfdom-headers).")
  endif()
  set(JTAC_CMEEL_PREFIX "${_jtac_cmeel}" CACHE PATH "site-packages/cmeel.prefix of the build's Python")
endif()
list(APPEND CMAKE_PREFIX_PATH "${JTAC_CMEEL_PREFIX}")
message(STATUS "jtac: cmeel prefix ${JTAC_CMEEL_PREFIX}")

# Pinocchio's config looks for Boost: CMake < 3.30 warns about Boost 1.90, CMake >= 3.30 must be
# told to use cmeel-boost's BoostConfig.cmake instead of the removed FindBoost module.
set(Boost_NO_WARN_NEW_VERSIONS ON)
if(POLICY CMP0167)
  cmake_policy(SET CMP0167 NEW)
endif()

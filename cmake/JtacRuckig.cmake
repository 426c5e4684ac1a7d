# Finds Ruckig (jerk-limited online trajectory generation, MIT) in the `ruckig` wheel pinned in
# requirements.txt: it installs its C++ headers (include/ruckig), a static libruckig.a (lib64/) and a
# CMake package config (lib64/cmake/ruckig) at the top of the build interpreter's site-packages, as
# the cmeel wheels install Pinocchio under site-packages/cmeel.prefix (JtacCmeel.cmake).
#
# Defines the target jtac::ruckig: Ruckig's community build, state-to-state trajectories only. The
# wheel's config marks its target WITH_CLOUD_CLIENT (intermediate waypoints through Ruckig's web
# API); that definition turns the trajectory's fixed arrays into std::vector (allocated when a
# trajectory is made or copied) and pulls httplib and nlohmann/json into every translation unit, so
# jtac::ruckig leaves it out. Nothing of libruckig.a depends on it: its compiled parts (the per-DoF
# profile steps and brakes) take Profile/Block, whose layout is the same either way; the calculator
# and trajectory templates are instantiated in jtac's own sources.
if(NOT DEFINED JTAC_RUCKIG_DIR)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import sysconfig; print(sysconfig.get_paths()['platlib'])"
    OUTPUT_VARIABLE _jtac_site_packages OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET RESULT_VARIABLE _jtac_site_packages_rc)
  set(_jtac_ruckig_dir "${_jtac_site_packages}/lib64/cmake/ruckig")
  if(NOT _jtac_site_packages_rc EQUAL 0 OR NOT EXISTS "${_jtac_ruckig_dir}/ruckig-config.cmake")
    message(FATAL_ERROR
      "jtac: no Ruckig CMake config under '${_jtac_site_packages}/lib64/cmake/ruckig' of ${Python_EXECUTABLE}. "
      "Run scripts/setup.sh (it installs the ruckig wheel from requirements.txt).")
  endif()
  set(JTAC_RUCKIG_DIR "${_jtac_ruckig_dir}" CACHE PATH "The ruckig wheel's CMake config directory")
endif()
find_package(ruckig 0.19 CONFIG REQUIRED PATHS "${JTAC_RUCKIG_DIR}" NO_DEFAULT_PATH)
message(STATUS "jtac: Ruckig ${ruckig_VERSION} from ${JTAC_RUCKIG_DIR}")

if(NOT TARGET jtac_ruckig)
  # The wheel's only configuration is Release; any build type links that library.
  get_target_property(_jtac_ruckig_library ruckig::ruckig IMPORTED_LOCATION_RELEASE)
  get_filename_component(_jtac_ruckig_prefix "${JTAC_RUCKIG_DIR}/../../.." ABSOLUTE)
  add_library(jtac_ruckig STATIC IMPORTED GLOBAL)
  add_library(jtac::ruckig ALIAS jtac_ruckig)
  set_target_properties(jtac_ruckig PROPERTIES
    IMPORTED_LOCATION "${_jtac_ruckig_library}"
    # An imported target's include directories are SYSTEM: Ruckig's headers escape jtac's -Werror.
    INTERFACE_INCLUDE_DIRECTORIES "${_jtac_ruckig_prefix}/include"
    IMPORTED_LINK_INTERFACE_LANGUAGES "CXX")
endif()

# libruckig.a is compiled with GCC >= 13, whose <iostream> refers to std::ios_base_library_init()
# (libstdc++ GLIBCXX_3.4.32) to pull the library's stream initialisation in. An older libstdc++
# (Debian 12: GCC 12) initialises the streams from each translation unit that includes <iostream>
# and has no such symbol: then ruckig_limiter.cpp defines it, empty (JTAC_RUCKIG_IOS_INIT_SHIM), so
# that the reference resolves; nothing else of libruckig.a needs a newer libstdc++.
if(NOT DEFINED JTAC_HAVE_IOS_BASE_LIBRARY_INIT)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles(
    "namespace std { void ios_base_library_init(); }\nint main() { std::ios_base_library_init(); }"
    JTAC_HAVE_IOS_BASE_LIBRARY_INIT)
  unset(CMAKE_REQUIRED_QUIET)
endif()
if(NOT JTAC_HAVE_IOS_BASE_LIBRARY_INIT)
  set_property(TARGET jtac_ruckig PROPERTY INTERFACE_COMPILE_DEFINITIONS JTAC_RUCKIG_IOS_INIT_SHIM=1)
  message(STATUS "jtac: this libstdc++ lacks std::ios_base_library_init (GCC < 13): shimmed for libruckig.a")
endif()

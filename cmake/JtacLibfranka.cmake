# Decides whether the libfranka device (franka_hw's FrankaDevice, _native.FrankaDevice) is built, and
# with which libfranka. Included from the top-level CMakeLists.txt (needs Python_EXECUTABLE).
#
# In order of preference:
#   1. a system libfranka: find_package(Franka) (target Franka::Franka, its own headers);
#   2. pylibfranka's bundled library (site-packages/pylibfranka.libs/libfranka-*.so.<version>, from
#      requirements.txt) with libfranka's public headers of the same version, which scripts/setup.sh
#      fetches into build/third_party/libfranka-<version>/include (JTAC_LIBFRANKA_INCLUDE_DIR);
#   3. neither: everything else is built, the device is not, and one message says why and how.
# FrankaDevice drives the ActiveControl object that pylibfranka creates, so the libfranka it is
# compiled against must be pylibfranka's version (RobotState's layout); a system libfranka of
# another version is passed over for the bundled one, and the binding checks the version at run time.
#
# Sets: JTAC_HAVE_LIBFRANKA (ON/OFF, also cached for scripts/setup.sh), JTAC_LIBFRANKA_VERSION,
# JTAC_LIBFRANKA_INSTALL_RPATH (the RPATH entry that finds the library from site-packages/jtac_py),
# and the target jtac::libfranka (headers + library; compile definition JTAC_HAVE_LIBFRANKA=1).

option(JTAC_WITH_LIBFRANKA "Build the libfranka device (FrankaDevice) when a libfranka is available" ON)
set(JTAC_LIBFRANKA_BUNDLED_VERSION "0.21.3")  # pylibfranka's pin in requirements.txt
set(JTAC_LIBFRANKA_INCLUDE_DIR
    "${PROJECT_SOURCE_DIR}/build/third_party/libfranka-${JTAC_LIBFRANKA_BUNDLED_VERSION}/include"
    CACHE PATH "libfranka public headers matching pylibfranka's bundled library (scripts/setup.sh fetches them)")

set(JTAC_HAVE_LIBFRANKA OFF)
set(JTAC_LIBFRANKA_VERSION "")
set(JTAC_LIBFRANKA_INSTALL_RPATH "")
set(_jtac_franka_why "")
set(_jtac_no_system "no system libfranka (find_package(Franka))")

# pylibfranka in the build's interpreter: its version and the directory of its bundled libraries,
# found without importing it.
set(_jtac_pylibfranka_version "")
set(_jtac_pylibfranka_libs "")
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
          "import importlib.metadata as m, importlib.util as u, os; s = u.find_spec('pylibfranka'); \
print(m.version('pylibfranka')); print(os.path.join(os.path.dirname(os.path.dirname(s.origin)), 'pylibfranka.libs'))"
  OUTPUT_VARIABLE _jtac_pylibfranka OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET RESULT_VARIABLE _jtac_pylibfranka_rc)
if(_jtac_pylibfranka_rc EQUAL 0)
  string(REPLACE "\n" ";" _jtac_pylibfranka "${_jtac_pylibfranka}")
  list(GET _jtac_pylibfranka 0 _jtac_pylibfranka_version)
  list(GET _jtac_pylibfranka 1 _jtac_pylibfranka_libs)
endif()

if(NOT JTAC_WITH_LIBFRANKA)
  set(_jtac_franka_why "JTAC_WITH_LIBFRANKA is OFF")
else()
  # ---- 1. a system libfranka
  find_package(Franka CONFIG QUIET)
  if(Franka_FOUND AND TARGET Franka::Franka)
    if(_jtac_pylibfranka_version AND NOT Franka_VERSION VERSION_EQUAL _jtac_pylibfranka_version)
      # pylibfranka creates the ActiveControl objects FrankaDevice drives: its version decides.
      set(_jtac_no_system "the system libfranka ${Franka_VERSION} is not pylibfranka's ${_jtac_pylibfranka_version}")
    else()
      set(JTAC_HAVE_LIBFRANKA ON)
      set(JTAC_LIBFRANKA_VERSION "${Franka_VERSION}")
      get_target_property(_jtac_franka_location Franka::Franka LOCATION)
      get_filename_component(JTAC_LIBFRANKA_INSTALL_RPATH "${_jtac_franka_location}" DIRECTORY)
      add_library(jtac_libfranka INTERFACE)
      target_link_libraries(jtac_libfranka INTERFACE Franka::Franka)
      message(STATUS "franka_hw: libfranka device ON, system libfranka ${Franka_VERSION} (${_jtac_franka_location})")
    endif()
  endif()

  # ---- 2. pylibfranka's bundled library + the fetched headers
  if(NOT JTAC_HAVE_LIBFRANKA)
    set(_jtac_franka_library "")
    if(_jtac_pylibfranka_libs)
      file(GLOB _jtac_franka_library "${_jtac_pylibfranka_libs}/libfranka-*.so.${JTAC_LIBFRANKA_BUNDLED_VERSION}")
    endif()
    list(LENGTH _jtac_franka_library _jtac_franka_count)
    if(NOT _jtac_pylibfranka_version)
      set(_jtac_franka_why "${_jtac_no_system} and no pylibfranka in ${Python_EXECUTABLE}")
    elseif(NOT _jtac_franka_count EQUAL 1)
      string(CONCAT _jtac_franka_why
          "${_jtac_no_system}, and pylibfranka ${_jtac_pylibfranka_version} has no bundled "
          "libfranka-*.so.${JTAC_LIBFRANKA_BUNDLED_VERSION} in ${_jtac_pylibfranka_libs} (requirements.txt pins "
          "pylibfranka==${JTAC_LIBFRANKA_BUNDLED_VERSION})")
    elseif(NOT EXISTS "${JTAC_LIBFRANKA_INCLUDE_DIR}/franka/active_control_base.h")
      string(CONCAT _jtac_franka_why
          "${_jtac_no_system}, and no libfranka ${JTAC_LIBFRANKA_BUNDLED_VERSION} headers in "
          "${JTAC_LIBFRANKA_INCLUDE_DIR} for pylibfranka's bundled library")
    else()
      set(JTAC_HAVE_LIBFRANKA ON)
      set(JTAC_LIBFRANKA_VERSION "${JTAC_LIBFRANKA_BUNDLED_VERSION}")
      set(JTAC_LIBFRANKA_INSTALL_RPATH "$ORIGIN/../pylibfranka.libs")
      add_library(jtac_libfranka_bundled SHARED IMPORTED)
      set_target_properties(jtac_libfranka_bundled PROPERTIES
        IMPORTED_LOCATION "${_jtac_franka_library}"
        INTERFACE_INCLUDE_DIRECTORIES "${JTAC_LIBFRANKA_INCLUDE_DIR}")
      add_library(jtac_libfranka INTERFACE)
      target_link_libraries(jtac_libfranka INTERFACE jtac_libfranka_bundled)
      # The bundled libfranka finds its Poco and fmt (beside it) only through a DT_RPATH of the object
      # that loads it: measured here, a module with the usual RUNPATH loads libfranka but then fails
      # on libPocoNet (a RUNPATH serves direct dependencies only, and libfranka's own RPATH went
      # unused). So whatever links it gets an RPATH, like pylibfranka's own module.
      target_link_options(jtac_libfranka INTERFACE "LINKER:--disable-new-dtags")
      message(STATUS "franka_hw: libfranka device ON, pylibfranka's ${_jtac_franka_library} with the headers "
                     "in ${JTAC_LIBFRANKA_INCLUDE_DIR} (${_jtac_no_system})")
    endif()
  endif()
endif()

if(JTAC_HAVE_LIBFRANKA)
  target_compile_definitions(jtac_libfranka INTERFACE JTAC_HAVE_LIBFRANKA=1
                             JTAC_LIBFRANKA_VERSION="${JTAC_LIBFRANKA_VERSION}")
  add_library(jtac::libfranka ALIAS jtac_libfranka)
elseif(JTAC_WITH_LIBFRANKA)
  message(WARNING
    "franka_hw: the libfranka device (FrankaDevice) is NOT built: ${_jtac_franka_why}. Everything else "
    "is. To enable it, run scripts/setup.sh (installs pylibfranka==${JTAC_LIBFRANKA_BUNDLED_VERSION} and "
    "fetches its headers into build/third_party/), or install libfranka ${JTAC_LIBFRANKA_BUNDLED_VERSION} "
    "(find_package(Franka)), or point -DJTAC_LIBFRANKA_INCLUDE_DIR=<dir with franka/active_control_base.h>; "
    "then reconfigure.")
else()
  message(STATUS "franka_hw: the libfranka device (FrankaDevice) is not built: ${_jtac_franka_why}")
endif()
set(JTAC_HAVE_LIBFRANKA_CACHED ${JTAC_HAVE_LIBFRANKA} CACHE INTERNAL "Whether the last configure built FrankaDevice")
set(JTAC_LIBFRANKA_WHY_CACHED "${_jtac_franka_why}" CACHE INTERNAL "Why the last configure did not build FrankaDevice")

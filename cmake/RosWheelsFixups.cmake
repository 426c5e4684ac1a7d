# Pass with -DCMAKE_PROJECT_INCLUDE=<this file> when building an ament package against the ROS 2
# Jazzy PyPI wheels (package CMakeLists stay stock: CMake reads this after every project()).
#
# Why: the wheels were built in a manylinux container, and their exported
# <pkg>__rosidl_generator_py targets list that machine's include paths
# (/opt/python/cp3XX-cp3XX/include/python3.X and its numpy include). CMake's generate step then
# fails with "Imported target ... includes non-existent path". At the end of configure (a deferred
# call, after every find_package ran) we point those entries at this interpreter's include
# directories and drop any other path that does not exist here.
cmake_minimum_required(VERSION 3.21)  # cmake_language(DEFER) and the IMPORTED_TARGETS property

if(NOT COMMAND jtac_fix_wheel_include_dirs)
  function(jtac_fix_wheel_include_dirs)
    if(DEFINED Python3_EXECUTABLE)
      set(_py "${Python3_EXECUTABLE}")
    else()
      find_program(_py NAMES python3 python REQUIRED)
    endif()
    execute_process(COMMAND "${_py}" -c "import sysconfig; print(sysconfig.get_paths()['include'])"
                    OUTPUT_VARIABLE _py_include OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${_py}" -c "import numpy; print(numpy.get_include())"
                    OUTPUT_VARIABLE _numpy_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    get_property(_targets DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
    set(_fixed 0)
    foreach(_target IN LISTS _targets)
      get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
      if(NOT _dirs)
        continue()
      endif()
      set(_kept "")
      set(_changed FALSE)
      foreach(_dir IN LISTS _dirs)
        if(_dir MATCHES "\\$<")
          list(APPEND _kept "${_dir}")  # generator expressions are resolved later
        elseif(EXISTS "${_dir}")
          list(APPEND _kept "${_dir}")
        elseif(_dir MATCHES "/include/python3")
          list(APPEND _kept "${_py_include}")
          set(_changed TRUE)
        elseif(_dir MATCHES "/numpy/(_core|core)/include$" AND _numpy_include)
          list(APPEND _kept "${_numpy_include}")
          set(_changed TRUE)
        else()
          set(_changed TRUE)  # another path of the wheel build machine: drop it
        endif()
      endforeach()
      if(_changed)
        list(REMOVE_DUPLICATES _kept)
        set_property(TARGET ${_target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
        math(EXPR _fixed "${_fixed} + 1")
      endif()
    endforeach()
    message(STATUS "jtac: rewrote the include directories of ${_fixed} imported ROS wheel targets")
  endfunction()
endif()

get_property(_jtac_fixups_registered DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY JTAC_WHEEL_FIXUPS)
if(NOT _jtac_fixups_registered)
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY JTAC_WHEEL_FIXUPS TRUE)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL jtac_fix_wheel_include_dirs)
endif()

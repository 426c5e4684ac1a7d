# Include right before rosidl_generate_interfaces() (after every find_package, so that no generator
# registers itself again afterwards), in jtac and in our control_msgs / controller_manager_msgs subsets.
# With JTAC_INTERFACES_CPP=OFF only the generators that Python needs run: the type hashes, the C structs,
# the C type supports (Fast DDS's, the introspection one and the dispatch between them) and the Python
# package. The C++ headers and the four C++ type-support libraries are skipped: nothing in jtac includes
# them (the node is rclpy), and they were about a third of each package's build.
#
# rosidl_generate_interfaces() runs every generator registered on the ament extension point
# "rosidl_generate_idl_interfaces" (each generator package registers itself when found); we keep
# the registrations of the generators listed below.
option(JTAC_INTERFACES_CPP
       "Also generate the C++ interfaces and type supports (OFF: only what Python needs; scripts/setup.sh)" ON)
if(NOT JTAC_INTERFACES_CPP)
  set(_jtac_rosidl_kept_generators
      rosidl_generator_type_description rosidl_generator_c rosidl_typesupport_fastrtps_c
      rosidl_typesupport_introspection_c rosidl_typesupport_c rosidl_generator_py)
  set(_jtac_rosidl_extensions "")
  set(_jtac_rosidl_skipped "")
  foreach(_jtac_extension IN LISTS AMENT_EXTENSIONS_rosidl_generate_idl_interfaces)
    string(REGEX REPLACE ":.*" "" _jtac_generator "${_jtac_extension}")  # "<package>:<cmake file>"
    if(_jtac_generator IN_LIST _jtac_rosidl_kept_generators)
      list(APPEND _jtac_rosidl_extensions "${_jtac_extension}")
    else()
      list(APPEND _jtac_rosidl_skipped "${_jtac_generator}")
    endif()
  endforeach()
  if(NOT _jtac_rosidl_extensions MATCHES "rosidl_generator_py:")
    message(FATAL_ERROR "jtac: rosidl_generator_py is not registered; found: ${AMENT_EXTENSIONS_rosidl_generate_idl_interfaces}")
  endif()
  set(AMENT_EXTENSIONS_rosidl_generate_idl_interfaces ${_jtac_rosidl_extensions})
  list(REMOVE_DUPLICATES _jtac_rosidl_skipped)
  message(STATUS "${PROJECT_NAME}: Python interfaces only (JTAC_INTERFACES_CPP=OFF), skipping ${_jtac_rosidl_skipped}")
endif()

# control_msgs is on no registry here. When no control_msgs package is installed, build our own
# definitions (interfaces/control_msgs, Jazzy field lists, so type names and fields match the real
# package on the wire) and install them into CMAKE_INSTALL_PREFIX, alongside jtac's interfaces.
# An installed copy of ours carries a hash of its definitions and is rebuilt when they change; a
# control_msgs without that marker is the real package and is used as it is (JtacInterfacePackage.cmake).
include(JtacInterfacePackage)
jtac_interface_package(control_msgs)

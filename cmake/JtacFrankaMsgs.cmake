# franka_msgs is on no registry here. When none is installed, build our own definitions of the subset
# the hand's per-command actions use (interfaces/franka_msgs: Move, Grasp, Homing, GraspEpsilon;
# franka_ros2's field lists, so type names and fields match the real package on the wire) and install
# them into CMAKE_INSTALL_PREFIX, exactly as JtacControlMsgs.cmake does for control_msgs. An installed
# copy of ours carries a hash of its definitions and is rebuilt when they change; one without that
# marker is the real package and is used as it is (JtacInterfacePackage.cmake).
include(JtacInterfacePackage)
jtac_interface_package(franka_msgs)

"""jtac_ros: the ROS 2 (rclpy) adapter of jtac: the controller node, parameter declarations, CLI.

The rosidl-generated interfaces are the separate package ``jtac`` (``jtac.action``, ``jtac.msg``);
no algorithm lives here.
"""

"""Session-wide test setup: ROS 2 traffic stays on this machine, on a domain of its own."""

import os
import random

# Must be set before any test imports rclpy (DDS reads them when the first context starts).
# LOCALHOST: Fast DDS would otherwise multicast discovery on every interface. A random domain per
# pytest session keeps parallel runs on one machine from seeing each other's nodes.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)
if "JTAC_TEST_DOMAIN_ID" in os.environ:
    os.environ["ROS_DOMAIN_ID"] = os.environ["JTAC_TEST_DOMAIN_ID"]
else:
    # 1..101 are valid domain ids on Linux with the default port mapping; 0 is everyone's default.
    os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 101))

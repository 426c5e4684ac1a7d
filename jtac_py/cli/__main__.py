"""``python -m jtac_py.cli``: the ROS-free verbs of ``jtac``."""

import sys

from jtac_py.cli import main

sys.exit(main())

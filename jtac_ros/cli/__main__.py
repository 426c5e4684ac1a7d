"""``python -m jtac_ros.cli``: the ``jtac`` command."""

import sys

from jtac_ros.cli import main

sys.exit(main())

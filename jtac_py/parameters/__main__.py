"""``python -m jtac_py.parameters``: see jtac_py.parameters.cli."""

import sys

from jtac_py.parameters.cli import main

sys.exit(main())

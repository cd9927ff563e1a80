"""``python -m debugrelay.cli``: the ``debugrelay`` command."""

import sys

from ._parser import main

sys.exit(main())

"""`python -m kenning` is the `kenning` command."""

from __future__ import annotations

import sys

from kenning.cli import main

sys.exit(main())

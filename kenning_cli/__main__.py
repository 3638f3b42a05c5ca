"""`python -m kenning_cli` is the `kenning` command."""

from __future__ import annotations

import sys

from kenning_cli.main import main

sys.exit(main())

"""``python -m epsparql.cli``: the ``epsparql`` command."""
import sys

from epsparql.cli.main import main

sys.exit(main())

#!/usr/bin/env bash
# Set up (if needed) and run the main job on bundled data: the stock-price
# patterns of examples/stock/ detected by the Prolog core over a bundled
# stream, printing the complex events.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m epsparql.demo "$@"

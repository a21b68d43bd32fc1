#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite, slow tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# one test process per core and one more (pytest-xdist: many tests wait on a
# subprocess, a JVM or a socket, and two processes left the two cores idle a
# third of the time), the tests of one file in one process (module fixtures
# such as a SparkSession are made once; the three files that share the
# SparkSession in one process too: tests/conftest.py);
# EPSPARQL_TEST_WORKERS=N sets how many; 0 (or a later -n 0) runs them in this process;
# files are handed out longest first (tests/conftest.py, LONGEST_FIRST)
workers=${EPSPARQL_TEST_WORKERS:-$(( $(nproc) + 1 ))}
exec .venv/bin/python -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder "$@"

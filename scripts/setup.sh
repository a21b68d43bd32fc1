#!/usr/bin/env bash
# Install what is missing on a Debian machine: SWI-Prolog (swi-prolog-nox),
# python3-venv, Java 17 (for Spark), a virtual environment in .venv with epsparql and its
# dependencies.  Safe to run again: it only does what is not done yet.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=()
command -v swipl >/dev/null 2>&1 || pkgs+=(swi-prolog-nox)
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || pkgs+=(python3-venv)
command -v java >/dev/null 2>&1 || pkgs+=(openjdk-17-jre-headless)   # for Spark
if ((${#pkgs[@]})); then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    echo "setup: installing ${pkgs[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv" >&2
    python3 -m venv .venv
fi

# Reinstall only when the dependency list changed.
stamp=".venv/.epsparql-deps-$(sha1sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    echo "setup: installing Python dependencies" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
    rm -f .venv/.epsparql-deps-*
    touch "$stamp"
fi

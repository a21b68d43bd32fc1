#!/usr/bin/env bash
# Install what is missing on a Debian machine: a SWI-Prolog new enough for
# janus-swi (scripts/swipl.sh), python3-venv, the Python headers and gcc (janus-swi
# and the bridge's C part are compiled), Java 17 (for Spark), Mosquitto and Chromium
# (epsparql serve's tests; mosquitto-clients' C publisher and subscriber for
# bench/serve.py), and a virtual environment in .venv with
# janus-swi built against that SWI-Prolog, epsparql and its dependencies.
# Safe to run again: it only does what is not done yet.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
pkgs=()
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || pkgs+=(python3-venv)
python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    >/dev/null 2>&1 || pkgs+=(python3-dev)
command -v gcc >/dev/null 2>&1 || pkgs+=(gcc)
command -v java >/dev/null 2>&1 || pkgs+=(openjdk-17-jre-headless)   # for Spark
# epsparql serve's tests: a real MQTT broker, and a browser for the live view
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || pkgs+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || pkgs+=(mosquitto-clients)   # bench/serve.py
command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
if ((${#pkgs[@]})); then
    echo "setup: installing ${pkgs[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        "${pkgs[@]}" >/dev/null
fi

# SWI-Prolog >= 9.1.12 (Debian's if new enough, else the project's own build).
prefix=$(bash scripts/swipl.sh)
swipl="$prefix/bin/swipl"
home=$("$swipl" --dump-runtime-variables | sed -n 's/^PLBASE="\(.*\)";$/\1/p')
if [ -z "$home" ] || [ ! -f "$home/boot.prc" ]; then
    echo "setup: cannot find the home of $swipl (PLBASE=$home)" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv" >&2
    python3 -m venv .venv
fi

# janus-swi, compiled against that SWI-Prolog.  Rebuilt (never from pip's
# wheel cache, which does not know which SWI-Prolog a wheel was built for)
# when it is missing or does not start with this home.
record=.venv/epsparql-swipl.json
want=$(printf '{"executable": "%s", "home": "%s"}\n' "$swipl" "$home")
if [ "$(cat "$record" 2>/dev/null)" != "$want" ] \
    || ! SWI_HOME_DIR="$home" .venv/bin/python -c 'import janus_swi' >/dev/null 2>&1; then
    echo "setup: building janus-swi against $swipl" >&2
    rm -f "$record"
    PATH="$prefix/bin:$PATH" SWI_HOME_DIR="$home" .venv/bin/python -m pip install -q \
        --disable-pip-version-check --no-cache-dir --force-reinstall --no-deps 'janus-swi>=1.5.2'
    SWI_HOME_DIR="$home" .venv/bin/python -c 'import janus_swi' \
        || { echo "setup: janus-swi does not start against $home" >&2; exit 1; }
fi
# Where epsparql.core finds this SWI-Prolog at run time (SWI_HOME_DIR overrides).
echo "$want" > "$record"

# Reinstall only when the dependency list changed.
stamp=".venv/.epsparql-deps-$(sha1sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    echo "setup: installing Python dependencies" >&2
    PATH="$prefix/bin:$PATH" SWI_HOME_DIR="$home" .venv/bin/python -m pip install -q \
        --disable-pip-version-check -e '.[dev]'
    rm -f .venv/.epsparql-deps-*
    touch "$stamp"
fi

# The C parts of the Prolog side (prolog/c), built once into
# ~/.cache/epsparql/native for this SWI-Prolog (prolog/native.pl; a run
# would build them on first use otherwise).
for lib in columns_buffer pane_accum rows_batch; do
    "$swipl" -q -g "use_module('prolog/native'), native_library($lib, _)" -t halt \
        || { echo "setup: cannot build prolog/c/$lib.c (a C compiler is needed)" >&2; exit 1; }
done

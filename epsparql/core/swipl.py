"""Which SWI-Prolog this process uses, found before janus-swi starts it.

janus-swi is compiled against one SWI-Prolog (``scripts/swipl.sh`` picks
it), but when imported it looks for that SWI-Prolog's *home* (boot file and
libraries) by itself, finds the first ``swipl`` on PATH, and aborts the
whole process ("incompatible VM-signature") when that is another version.
So the home is set in ``SWI_HOME_DIR`` before the import, from, in order:

1. ``SWI_HOME_DIR`` already in the environment (the user's override);
2. the record ``scripts/setup.sh`` writes into the virtual environment
   (``<sys.prefix>/epsparql-swipl.json``: executable and home);
3. the ``swipl`` on PATH, when it is new enough for janus-swi (asked for
   its home with ``--dump-runtime-variables``).

Subprocesses inherit the variable, so a ``swipl`` run by
:func:`swipl_executable` and Spark's Python workers use the same home.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

#: janus-swi needs SWI-Prolog 9.1.12 or later.
MIN_VERSION = 90112
RECORD = "epsparql-swipl.json"


class SwiplNotFound(RuntimeError):
    """No SWI-Prolog new enough for janus-swi was found."""


def _record() -> dict[str, str] | None:
    path = Path(sys.prefix) / RECORD
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("executable", "home")):
        return data
    return None


def _runtime_variables(exe: str) -> dict[str, str]:
    try:
        out = subprocess.run([exe, "--dump-runtime-variables"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    props = {}
    for line in out.splitlines():
        name, sep, value = line.partition("=")
        if sep and value.startswith('"') and value.endswith('";'):
            props[name] = value[1:-2]
    return props


def _from_path() -> dict[str, str] | None:
    exe = shutil.which("swipl")
    if exe is None:
        return None
    props = _runtime_variables(exe)
    try:
        if int(props.get("PLVERSION", "0")) < MIN_VERSION:
            return None
    except ValueError:
        return None
    return {"executable": exe, "home": props.get("PLBASE", "")}


def _executable_in(home: str) -> str | None:
    """The swipl binary inside a home (``<home>/bin/<arch>/swipl``)."""
    bins = Path(home) / "bin"
    for exe in sorted(bins.glob("*/swipl")) if bins.is_dir() else []:
        if os.access(exe, os.X_OK):
            return str(exe)
    return None


@lru_cache(maxsize=1)
def _located() -> tuple[str, str]:
    """(executable, home) of the SWI-Prolog in use."""
    env_home = os.environ.get("SWI_HOME_DIR")
    rec = _record()
    if env_home:
        if rec and os.path.realpath(rec["home"]) == os.path.realpath(env_home):
            return rec["executable"], env_home
        exe = _executable_in(env_home) or shutil.which("swipl") or "swipl"
        return exe, env_home
    for found in (rec, _from_path()):
        if found and (Path(found["home"]) / "boot.prc").is_file():
            return found["executable"], found["home"]
    raise SwiplNotFound(
        "no SWI-Prolog >= 9.1.12 found for janus-swi: run scripts/setup.sh "
        "(it records the one it installs in the virtual environment), or set "
        "SWI_HOME_DIR to the home of a SWI-Prolog janus-swi was built against")


def swipl_home() -> str:
    """The home directory (``PLBASE``) of the SWI-Prolog in use."""
    return _located()[1]


def swipl_executable() -> str:
    """The ``swipl`` executable of the same SWI-Prolog as the bridge: run
    every Prolog subprocess (tests, benchmark drivers) with it."""
    return _located()[0]


def configure_environment() -> str:
    """Set ``SWI_HOME_DIR`` for this process and its children (once, before
    janus-swi is imported); returns the home."""
    home = swipl_home()
    os.environ["SWI_HOME_DIR"] = home
    return home

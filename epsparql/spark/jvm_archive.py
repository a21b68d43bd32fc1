"""Class data sharing for a local driver JVM: Spark's start-up, once per machine.

A local Spark driver loads and verifies some 15,000 classes before it
runs a job: about 10 CPU seconds on this machine, as much as the engines
spend on 400,000 answer-heavy events, paid by every ``epsparql spark``
command (bench/README.md, "JVM start-up").  The JVM can keep the loaded
classes in an archive (AppCDS: ``-XX:ArchiveClassesAtExit`` writes it when
the JVM exits, ``-XX:SharedArchiveFile`` maps it at the next start), which
halves that.  The first local session of a machine writes the archive
under a temporary name; a later one checks it (a JVM that maps a
truncated archive dies of SIGBUS, so only an archive that a ``java
-Xshare:on -version`` with the driver's class path accepted is ever used)
and renames it; every one
after that starts from it.  It is keyed by the Java binary and the Spark
jars (their place too), so another JDK, PySpark or virtual environment
makes another, and the last one made is kept.

Nothing here is an error: without ``java``, with a read-only cache, or
with ``EPSPARQL_JVM_ARCHIVE=0`` the JVM starts as it would anyway.  The
archive (~160 MB) lives in the cache directory (``$EPSPARQL_CACHE_DIR``,
else ``$XDG_CACHE_HOME/epsparql``, else ``~/.cache/epsparql``), under
``jvm/``.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ..language.lark_cache import cache_dir

#: The JVM's messages about the archive (one per class it skips while
#: writing, or a warning when it cannot use one) stay off the user's terminal.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def java_binary() -> str | None:
    """The ``java`` Spark's launcher runs: ``$JAVA_HOME/bin/java``, else on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def archive_options() -> tuple[str, Path | None]:
    """The JVM options for the archive: map it, or write one at exit, or
    none (switched off, no ``java``, no cache, another process writing);
    and the archive this JVM will write, if it will (:func:`note_class_path`)."""
    if os.environ.get("EPSPARQL_JVM_ARCHIVE", "1").lower() in ("0", "off", "no", "false"):
        return "", None
    java = java_binary()
    where = cache_dir()
    if java is None or where is None:
        return "", None
    try:
        where = where / "jvm"
        where.mkdir(parents=True, exist_ok=True)
        name = f"spark-{_key(java)}"
        final = where / f"{name}.jsa"
        if final.exists():
            _sweep(where)
            return f"-XX:SharedArchiveFile={final} {QUIET}", None
        writing = False
        for cp in where.glob(f"{name}.*.part.cp"):
            part = cp.with_suffix("")
            if _writer_running(part):
                writing = True
                continue
            if part.exists() and _usable(java, part, cp.read_text(encoding="utf-8")):
                os.replace(part, final)
                for old in where.glob("spark-*.jsa"):      # other JDKs' or Sparks'
                    if old != final:
                        old.unlink(missing_ok=True)
                cp.unlink(missing_ok=True)
                _sweep(where)
                return f"-XX:SharedArchiveFile={final} {QUIET}", None
            part.unlink(missing_ok=True)
            cp.unlink(missing_ok=True)
        if writing:
            return "", None
        part = where / f"{name}.{os.getpid()}.part"
        return f"-XX:ArchiveClassesAtExit={part} {QUIET}", part
    except OSError:                  # a read-only or full cache: start as usual
        return "", None


def _sweep(where: Path) -> None:
    """Remove the archives being written that no JVM writes any more: the
    ones of sessions that started together (each writes one; one is kept),
    of a JVM killed before it wrote, of other installations."""
    for part in list(where.glob("spark-*.part")) + \
            [cp.with_suffix("") for cp in where.glob("spark-*.part.cp")]:
        if not _writer_running(part):
            part.unlink(missing_ok=True)
            Path(f"{part}.cp").unlink(missing_ok=True)


def note_class_path(part: Path, spark: object) -> None:
    """Keep the class path of the JVM that will write ``part`` beside it:
    the archive is checked against it (an archive maps only with the class
    path it was written with)."""
    try:
        cp = spark.sparkContext._jvm.System.getProperty("java.class.path")  # type: ignore[attr-defined]
        Path(f"{part}.cp").write_text(str(cp), encoding="utf-8")
    except Exception:                # no class path: the archive is dropped later
        pass


def _key(java: str) -> str:
    """The Java binary (its real path and time) and the Spark jars (where
    they are: an archive maps only with the class path it was written with,
    so each installation, a fresh clone's virtual environment too, has its
    own)."""
    import pyspark
    real = os.path.realpath(java)
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    listing = sorted(p.name for p in jars.glob("*.jar")) if jars.is_dir() else []
    text = "\0".join([real, str(os.stat(real).st_mtime_ns), pyspark.__version__, str(jars),
                      *listing])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _writer_running(part: Path) -> bool:
    """Is the JVM that writes ``part`` at its exit still there?  Until it
    has exited the file may be missing or half written."""
    needle = f"-XX:ArchiveClassesAtExit={part}".encode()
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return True                  # cannot tell: leave it
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle in f.read():
                    return True
        except OSError:
            continue
    return False


def _usable(java: str, archive: Path, class_path: str) -> bool:
    """Does a JVM with the driver's class path and collector start with
    ``archive`` mapped (``-Xshare:on``: it must, or it fails)?"""
    try:
        p = subprocess.run([java, "-Xshare:on", "-XX:+UseParallelGC", "-XX:ErrorFile=/dev/null",
                            f"-XX:SharedArchiveFile={archive}", *QUIET.split(), "-cp", class_path,
                            "-version"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.returncode == 0

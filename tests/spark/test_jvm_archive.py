"""The driver JVM's class archive (epsparql/spark/jvm_archive.py).

A local session writes the archive when its JVM exits; the next one checks
it with the driver's class path, renames it and starts from it, without a
word on stderr (the whole suite's Spark sessions start from the one in the
user's cache).  An archive a JVM cannot map (one cut short: a JVM that
maps it dies of SIGBUS) is dropped, never used.  Each run is a process of
its own with a cache directory of its own.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from epsparql.spark import jvm_archive

pytestmark = [pytest.mark.spark, pytest.mark.slow]

JOB = """\
import sys
from epsparql.spark import spark_session
spark = spark_session("local[1]", light_jvm=True)
print(spark.sparkContext.defaultParallelism)       # the driver JVM answers (no job:
                                                   # a SQL job's classes cost 8 s of CPU)
cmd = open(f"/proc/{spark.sparkContext._jvm.ProcessHandle.current().pid()}/cmdline", "rb").read()
print([a for a in cmd.decode().split("\\0") if "Archive" in a])
"""


def run_job(tmp_path, cache):
    env = dict(os.environ, EPSPARQL_CACHE_DIR=str(cache), PYTHONWARNINGS="ignore")
    script = tmp_path / "job.py"
    script.write_text(JOB)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    cores, options = p.stdout.splitlines()
    assert cores == "1"                                 # local[1]
    assert "cds" not in p.stderr and "shared archive" not in p.stderr.lower(), p.stderr
    return options


def wait_for_writer(jvm):
    for _ in range(600):                        # the JVM writes the archive as it exits
        parts = list(jvm.glob("*.part"))
        if parts and not jvm_archive._writer_running(parts[0]):
            return parts[0]
        time.sleep(0.1)
    raise AssertionError(f"no archive written: {list(jvm.iterdir())}")


def test_a_session_writes_the_archive_and_the_next_starts_from_it(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = run_job(tmp_path, cache)
    assert "-XX:ArchiveClassesAtExit=" in first
    part = wait_for_writer(cache / "jvm")
    assert part.stat().st_size > 10 << 20
    class_path = (cache / "jvm" / f"{part.name}.cp").read_text()
    assert class_path.count(".jar") > 100
    # the next session: checked, renamed, mapped (-Xshare:on: a JVM that
    # cannot map it fails), the JVM's own words about it silenced
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", str(cache))
    options, writes = jvm_archive.archive_options()
    [archive] = (cache / "jvm").glob("*.jsa")
    assert options.split() == [f"-XX:SharedArchiveFile={archive}", *jvm_archive.QUIET.split()]
    assert writes is None
    assert sorted(p.name for p in (cache / "jvm").iterdir()) == [archive.name]
    java = jvm_archive.java_binary()
    p = subprocess.run([java, "-Xshare:on", "-XX:+UseParallelGC", *options.split(), "-cp",
                        class_path, "-version"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "cds" not in p.stderr and "archive" not in p.stderr, p.stderr


def test_an_archive_cut_short_is_dropped_not_used(tmp_path, monkeypatch):
    if jvm_archive.java_binary() is None:
        pytest.skip("no java")
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", str(tmp_path))
    options, part = jvm_archive.archive_options()
    assert options.startswith("-XX:ArchiveClassesAtExit=") and part is not None
    part.write_bytes(b"\x00" * 4096)             # as a JVM killed while writing leaves it
    part.with_name(part.name + ".cp").write_text("/nonexistent.jar")
    options, again = jvm_archive.archive_options()
    assert not part.exists() and not part.with_name(part.name + ".cp").exists()
    assert options.startswith("-XX:ArchiveClassesAtExit=") and again is not None
    assert not list(tmp_path.glob("jvm/*.jsa"))


def test_archives_no_jvm_writes_any_more_are_removed(tmp_path, monkeypatch):
    """Sessions that start together each write an archive (one is kept); a
    JVM killed before it wrote leaves a class path file; other
    installations leave theirs.  Once an archive is in use they go."""
    if jvm_archive.java_binary() is None:
        pytest.skip("no java")
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", str(tmp_path))
    _, part = jvm_archive.archive_options()
    final = part.with_name(part.name.split(".")[0] + ".jsa")
    final.write_bytes(b"in use")
    stale = [part.with_name(part.name.split(".")[0] + ".1.part"),
             tmp_path / "jvm" / "spark-0123456789abcdef.7.part"]
    for x in stale:
        x.write_bytes(b"\x00" * 1024)
        x.with_name(x.name + ".cp").write_text("/nonexistent.jar")
    (tmp_path / "jvm" / "spark-0123456789abcdef.8.part.cp").write_text("/nonexistent.jar")
    options, writes = jvm_archive.archive_options()
    assert options.startswith(f"-XX:SharedArchiveFile={final} ") and writes is None
    assert sorted(p.name for p in (tmp_path / "jvm").iterdir()) == [final.name]


def test_switched_off(monkeypatch, tmp_path):
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EPSPARQL_JVM_ARCHIVE", "0")
    assert jvm_archive.archive_options() == ("", None)
    monkeypatch.setenv("EPSPARQL_JVM_ARCHIVE", "1")
    monkeypatch.setenv("EPSPARQL_CACHE_DIR", "")
    assert jvm_archive.archive_options() == ("", None)

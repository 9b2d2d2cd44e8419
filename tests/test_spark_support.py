"""The Spark tests skip with a reason that says what is missing: the extra, or Java 17."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.spark_support import JAVA, java_major, spark_missing

HAS_EXTRA = importlib.util.find_spec("pyspark") is not None and importlib.util.find_spec("narwhals") is not None


@pytest.mark.skipif(not HAS_EXTRA, reason="needs the spark extra: pip install '.[spark]'")
def test_without_java_the_reason_names_java_17(tmp_path: Path) -> None:
    # An empty PATH and no JAVA_HOME: no java to start.
    assert java_major({"PATH": str(tmp_path)}) is None
    assert spark_missing({"PATH": str(tmp_path)}) == (
        f"needs Java {JAVA} for Spark: no java under JAVA_HOME or on PATH (e.g. apt-get install openjdk-{JAVA}-jdk)"
    )


@pytest.mark.skipif(not HAS_EXTRA, reason="needs the spark extra: pip install '.[spark]'")
def test_an_old_java_is_named_with_its_version(tmp_path: Path) -> None:
    # A java that prints what Java 8 prints on stderr: "1.8.0" is major version 8.
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_402\"' >&2\n", encoding="utf-8")
    java.chmod(0o755)
    assert java_major({"JAVA_HOME": str(tmp_path)}) == 8
    assert spark_missing({"JAVA_HOME": str(tmp_path)}) == f"needs Java {JAVA} for Spark: the java found is Java 8"


def test_the_java_on_this_machine_is_read() -> None:
    # Whatever is installed, a version is read when a java is there (CI installs Java 17).
    home = os.environ.get("JAVA_HOME")
    present = (
        (Path(home) / "bin" / "java").exists()
        if home
        else any((Path(d) / "java").exists() for d in os.environ.get("PATH", "").split(os.pathsep) if d)
    )
    assert (java_major() is not None) == present

"""Inspect ``.eval`` archives whose zip structure is not one log: refused whole, never read in part."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from evalframe.errors import ImportUnreadable
from evalframe.importers import inspect_ai
from tests.conftest import real

LOG_STREAMING = real("inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval")


def test_a_member_name_held_twice_refuses_the_archive(tmp_path: Path) -> None:
    # A second samples/1_epoch_1.json after the first: zipfile's name lookup returns the last one, so a rewritten
    # sample (a fail turned into a pass, the retry-until-pass pattern) replaced the first with exit 0.
    doubled = tmp_path / "doubled.eval"
    with zipfile.ZipFile(LOG_STREAMING) as src, zipfile.ZipFile(doubled, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
        with pytest.warns(UserWarning, match="Duplicate name: 'samples/1_epoch_1.json'"):
            dst.writestr("samples/1_epoch_1.json", src.read("samples/1_epoch_1.json"))
    with pytest.raises(ImportUnreadable) as excinfo:
        inspect_ai.read([doubled])
    assert excinfo.value.notes.select("kind", "source", "detail").rows() == [
        (
            "unreadable_file",
            str(doubled),
            "the archive holds 1 member name(s) more than once (samples/1_epoch_1.json): which copy is the log's "
            "is not defined",
        )
    ]

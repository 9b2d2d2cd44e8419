"""Defects the fuzz suite found (tests/property/test_fuzz.py), each with its exact outcome."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.load import read_csv_strict
from tests.property.checker import expect


def _kinds(path: Path) -> list[tuple[str, int | None]]:
    return read_csv_strict(path).problems.select("kind", "line").rows()


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"candidate,case_id,passed\r\nA,q1,1\nA,q2,1\r\n", 2),  # CRLF, then LF
        (b"candidate,case_id,passed\nA,q1,1\nA,q2,1\r", 3),  # LF, then a lone CR
        (b"candidate,case_id,passed\rA,q1,1\r\nA,q2,1\r", 2),  # CR, then CRLF
        (b"candidate,case_id,passed\r\nA,q1,1\r\n\n", 3),  # a blank line after the data ends with LF
    ],
)
def test_a_csv_mixing_line_endings_is_refused_at_the_first_line_that_differs(
    tmp_path: Path, data: bytes, line: int
) -> None:
    # SPEC §3 "line endings": evalframe read these as if each were one kind (the fuzz suite: exit 0).
    p = tmp_path / "r.csv"
    p.write_bytes(data)
    assert _kinds(p) == [("mixed_line_endings", line)]
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, p)
    assert refused.value.problems.filter(pl.col("refusing")).select("kind", "line").rows() == [
        ("mixed_line_endings", line)
    ]


def test_a_line_break_inside_a_quoted_field_is_data_not_a_line_ending(tmp_path: Path) -> None:
    # A spreadsheet writes LF inside the cells of a CRLF file: that file uses one line ending.
    p = tmp_path / "r.csv"
    p.write_bytes(b'candidate,case_id,passed\r\nA,"a\nb",1\r\nA,q2,0\r\n')
    assert _kinds(p) == []
    frame = read_csv_strict(p).frame.select("case_id", "line").collect()
    assert frame.rows() == [("a\nb", 2), ("q2", 4)]


def test_one_kind_of_line_ending_throughout_is_read(tmp_path: Path) -> None:
    for ending in (b"\n", b"\r\n", b"\r"):
        p = tmp_path / "r.csv"
        p.write_bytes(ending.join([b"candidate,case_id,passed", b"A,q1,1", b"A,q2,0", b""]))
        assert _kinds(p) == []
        assert read_csv_strict(p).frame.select("case_id", "line").collect().rows() == [("q1", 2), ("q2", 3)]


@pytest.mark.parametrize(("bad", "kind"), [(b"\xef\xbb\xbf", "misplaced_bom"), (b"\xff", "undecodable_bytes")])
def test_a_lone_cr_ends_a_line_for_byte_problems_as_it_does_for_records(tmp_path: Path, bad: bytes, kind: str) -> None:
    # The bytes were counted by LF only: a CR-only file put every byte problem on line 1.
    p = tmp_path / "r.csv"
    p.write_bytes(b"candidate,case_id,passed\rA,q1,1\r" + bad + b"A,q2,1\r")
    assert _kinds(p) == [(kind, 3)]


@pytest.mark.parametrize(
    "row",
    [b"A,q1,99999999999999999999,1,1", b"A,q1,1,9223372036854775808,1", b"A,q1,9223372036854775808,1,1"],
)
def test_an_integer_beyond_64_bits_in_trial_or_attempt_is_an_invalid_integer(tmp_path: Path, row: bytes) -> None:
    # It matched the digits pattern, then became null: refused as 'empty_value' (trial = null), not as what it is.
    p = tmp_path / "r.csv"
    p.write_bytes(b"candidate,case_id,trial,attempt,passed\n" + row + b"\nA,q2,1,1,1\n")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, p)
    refusing = refused.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "line").rows() == [("invalid_integer", 2)]
    assert refusing.item(0, "detail").endswith("is beyond the 64-bit integer range (at most 9223372036854775807)")


def test_the_checker_and_the_cli_agree_on_the_text_stays_text_repro(tmp_path: Path) -> None:
    # Issue 19's first repro through both: 2 scored, 2 passed.
    plan, results = tmp_path / "p.csv", tmp_path / "r.csv"
    plan.write_bytes(b"case_id,expected\nq1,007\nq2,1.50\n")
    results.write_bytes(b"case_id,answer\nq1,007\nq2,1.50\n")
    expected = expect(plan.read_bytes(), results.read_bytes(), candidates=["A"])
    assert (expected.exit, expected.counts["A"]["scored"], expected.counts["A"]["passed"]) == (0, 2, 2)
    result = CliRunner().invoke(
        main, ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--format", "json"]
    )
    assert result.exit_code == 0
    (row,) = json.loads(result.stdout)["summary"]
    assert {k: row[k] for k in expected.counts["A"]} == expected.counts["A"]

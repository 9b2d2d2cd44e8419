"""Declared input limits (SPEC §6b): each an input error naming the file, the limit and the flag that raises it."""

from __future__ import annotations

import builtins
import importlib
import json
import resource
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.errors import InputFormatError, LimitExceeded
from evalframe.importers import inspect_ai
from evalframe.importers._kit import ImportUnreadable
from evalframe.load import JSONLimitError, Limits, check_line_lengths, json_depth, limits, parse_json_text
from evalframe.load.limit import BYTES_PER_PLANNED_UNIT, MAX_PLANNED_UNITS, default_planned_units
from evalframe.plan import Plan
from tests.cli.support import run
from tests.conftest import FIXTURES

LOG_STREAMING = (
    FIXTURES / "real" / "inspect_ai" / "UKGovernmentBEIS-inspect_ai" / "tests" / "log" / "test_eval_log"
) / "log_streaming.eval"


def one_line_error(err: str) -> str:
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err.rstrip("\n")


def audit(tmp_path: Path, results: Path, *limit_flags: str) -> tuple[int, str, str]:
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\nq2\n", encoding="utf-8")
    return run([*limit_flags, "audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"])


def test_the_defaults_are_documented_values() -> None:
    assert Limits() == Limits(
        line_bytes=64 * 2**20, json_depth=512, member_bytes=256 * 2**20, archive_bytes=2 * 2**30, planned_units=10**8
    )
    assert inspect_ai.MAX_MEMBER_BYTES == 256 * 2**20


def test_a_long_json_lines_line_is_an_input_error_naming_the_flag(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    long_answer = "x" * 5000
    results.write_text(
        '{"case_id": "q1", "passed": 1}\n' + json.dumps({"case_id": "q2", "passed": 1, "note": long_answer}) + "\n"
    )
    code, out, err = audit(tmp_path, results, "--max-line-bytes", "4096")
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {results}:2: a line longer than 4096 bytes (limit 4096; raise it with --max-line-bytes)"
    )
    # Raised, the line is read: the batch is then refused for its undeclared column (exit 1), not by the limit.
    code, _, err = audit(tmp_path, results, "--max-line-bytes", "8192")
    assert code == 1 and "unexpected_column" in err


def test_a_long_csv_line_after_crlf_lines_names_its_editor_line(tmp_path: Path) -> None:
    results = tmp_path / "results.csv"
    results.write_bytes(b"case_id,passed\r\nq1,1\r\nq2," + b"1" * 300 + b"\r\n")
    code, _, err = audit(tmp_path, results, "--max-line-bytes", "100")
    assert code == 2
    assert one_line_error(err) == (
        f"error: {results}:3: a line longer than 100 bytes (limit 100; raise it with --max-line-bytes)"
    )


def test_a_huge_single_line_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "one_line.jsonl"
    path.write_bytes(b'{"a": "' + b"y" * (8 * 2**20) + b'"}\n')
    read: list[int] = []
    real_open = builtins.open

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if Path(file) == path and "b" in mode:
            real_read = handle.read

            def read_counted(size: int = -1) -> bytes:
                data = real_read(size)
                read.append(len(data))
                return data

            handle.read = read_counted
        return handle

    monkeypatch.setattr(builtins, "open", counting_open)
    with limits(line_bytes=2**20), pytest.raises(InputFormatError) as info:
        check_line_lengths(path)
    assert (info.value.line, info.value.path) == (1, str(path))
    assert sum(read) == 2 * 2**20  # two 1 MiB chunks of the 8 MiB line, then refused
    assert max(read) == 2**20


def test_lines_ended_by_lone_cr_and_crlf_split_between_chunks_are_counted_as_an_editor_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.import_module("evalframe.load.limit"), "_CHUNK", 7)
    cases = [
        (b"abc\nabcdefghijkl\nx", 2),
        (b"abc\r\nabc\r\nabcdef", 3),
        (b"a\rb\rc\rdddddd", 4),
        (b"aaaaa\naaaaa\r\naaaaa\n", None),
    ]
    path = tmp_path / "lines.txt"
    for data, line in cases:
        path.write_bytes(data)
        with limits(line_bytes=5):
            if line is None:
                check_line_lengths(path)
                continue
            with pytest.raises(InputFormatError) as info:
                check_line_lengths(path)
        assert info.value.line == line, data


def test_json_deeper_than_the_limit_is_refused_and_the_flag_raises_it(tmp_path: Path) -> None:
    nested = "[" * 600 + "]" * 600
    assert json_depth('{"a": "[[[[", "b": [[1]]}') == 3 and json_depth(nested) == 600
    results = tmp_path / "results.jsonl"
    results.write_text('{"case_id": "q1", "passed": 1}\n{"case_id": "q2", "passed": 1, "x": ' + nested + "}\n")
    code, _, err = audit(tmp_path, results)
    assert code == 2
    assert one_line_error(err) == (
        f"error: {results}:2: JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"
    )
    code, _, err = audit(tmp_path, results, "--max-json-depth", "700")
    assert code == 1 and "unexpected_column" in err  # read: refused for the undeclared column x
    with limits(json_depth=700):
        assert parse_json_text(nested) is not None


def test_limits_must_be_positive_and_are_restored_after_the_block() -> None:
    with pytest.raises(ValueError, match="--max-line-bytes must be a positive integer, got 0"):
        with limits(line_bytes=0):
            pass
    with limits(json_depth=3):
        with pytest.raises(ValueError, match=r"limit 3; raise it with --max-json-depth"):
            parse_json_text("[[[[1]]]]")
    assert parse_json_text("[[[[1]]]]") == [[[[1]]]]


def bomb(path: Path, members: int, member_bytes: int) -> Path:
    """A .eval whose header is a real log's and whose sample members are ``member_bytes`` of blanks each."""
    with zipfile.ZipFile(LOG_STREAMING) as real:
        header = real.read("header.json")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", header)
        for i in range(members):
            with archive.open(f"samples/s{i}_epoch_1.json", "w", force_zip64=True) as member:
                block = b" " * 2**20
                for _ in range(member_bytes // len(block)):
                    member.write(block)
                member.write(b"{}")
    return path


def test_an_archive_larger_than_the_limit_in_all_is_refused_before_any_sample_is_read(tmp_path: Path) -> None:
    archive = bomb(tmp_path / "bomb.eval", members=4, member_bytes=2 * 2**20)
    out_folder = tmp_path / "o"
    code, out, err = run(
        ["--max-archive-bytes", str(6 * 2**20), "import", "inspect", str(archive), "--out", str(out_folder)]
    )
    assert (code, out) == (2, "")
    recorded = sum(m.file_size for m in zipfile.ZipFile(archive).infolist())
    assert one_line_error(err) == (
        f"error: {archive}: the archive's members record {recorded} bytes decompressed, more than {6 * 2**20} "
        f"bytes (limit {6 * 2**20}; raise it with --max-archive-bytes)"
    )
    assert not out_folder.exists()


def test_a_member_larger_than_the_limit_is_refused_from_its_recorded_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = bomb(tmp_path / "bomb.eval", members=1, member_bytes=3 * 2**20)
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def watched(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(name if isinstance(name, str) else name.filename)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", watched)
    with limits(member_bytes=2**20), pytest.raises(ImportUnreadable) as info:
        inspect_ai.read([archive])
    assert opened == ["header.json"]  # the sample member was never decompressed
    assert info.value.path == f"{archive}!samples/s0_epoch_1.json"
    detail = info.value.notes.filter(info.value.notes["source"].str.ends_with("!samples/s0_epoch_1.json"))
    assert detail.get_column("detail").to_list() == [
        f"the archive member records {3 * 2**20 + 2} bytes decompressed, more than {2**20} bytes "
        f"(limit {2**20}; raise it with --max-member-bytes)"
    ]


def test_the_limits_are_read_from_the_environment(tmp_path: Path) -> None:
    results = tmp_path / "results.csv"
    results.write_text("case_id,passed\nq1," + "1" * 200 + "\n")
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\n")
    args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"]
    result = CliRunner(env={"EVALFRAME_MAX_LINE_BYTES": "64"}).invoke(main, args)
    assert result.exit_code == 2
    assert "(limit 64; raise it with --max-line-bytes)" in result.stderr


def test_json_cut_off_inside_a_string_is_measured_in_one_pass() -> None:
    # What a crashed writer leaves: 600 brackets, then a string of 256,000 escaped quotes that never closes. The
    # string runs to the end of the text (its brackets would not count), so the depth is the 600 brackets'; the
    # string pattern had retried from each of its quotes (over 60 CPU-seconds for these 500 KiB).
    text = "[" * 600 + '\\"' * 256_000
    assert json_depth(text) == 600
    assert json_depth('["a\\"[", "b\\\\", ["c') == 2
    with pytest.raises(JSONLimitError, match=r"^JSON nested too deeply to read \(limit 512; raise it with"):
        parse_json_text(text)


def test_a_plan_of_more_planned_units_than_the_limit_is_refused_before_its_units_are_built(tmp_path: Path) -> None:
    # 4 cases × 1 candidate × 10**8 trials: 4 * 10**8 units, refused from the counts (it aborted at 4 GiB).
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\nq2\nq3\nq4\n", encoding="utf-8")
    results = tmp_path / "results.csv"
    results.write_text("candidate,case_id,passed\nA,q1,1\n", encoding="utf-8")
    args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--trials", str(10**8)]
    code, out, err = run(args)
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {plan}: 4 cases × 1 candidate × 100000000 trials: 400000000 planned units"
        " (limit 100000000; raise it with --max-planned-units)"
    )
    # At the limit (8 = 4 × 1 × 2) the plan is built; one unit over it (12 = 4 × 1 × 3) is refused.
    args[-1] = "2"
    assert run(["--max-planned-units", "8", *args])[0] == 0
    args[-1] = "3"
    code, _, err = run(["--max-planned-units", "8", *args])
    assert code == 2
    assert one_line_error(err).endswith("12 planned units (limit 8; raise it with --max-planned-units)")


def test_under_an_address_space_limit_the_default_planned_units_limit_is_that_limit_over_320_bytes(
    tmp_path: Path,
) -> None:
    # Under 4 GiB of address space a 24M-unit cross product and a 20M-row units table audit
    # (benchmarks/RESULTS.md): under that limit the default is 4 GiB / 320 = 13,421,772 units, so a plan the
    # default lets in fits; without one it stays 100M. Here the plan is refused from its counts at once.
    assert default_planned_units(4 * 2**30) == 4 * 2**30 // BYTES_PER_PLANNED_UNIT == 13_421_772
    assert default_planned_units(320 * 10**9) == MAX_PLANNED_UNITS == 10**8
    assert (default_planned_units(320 * 7), default_planned_units(319)) == (7, 1)
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\nq2\nq3\nq4\n", encoding="utf-8")
    results = tmp_path / "results.csv"
    results.write_text("candidate,case_id,passed\nA,q1,1\n", encoding="utf-8")

    def audit(trials: int) -> subprocess.CompletedProcess[str]:
        four_gib = 4 * 2**30
        args = ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", "--trials", str(trials)]
        args.append("--no-progress")  # stderr holds the one error line, however long the run takes
        return subprocess.run(
            [sys.executable, "-m", "evalframe.cli", *args],
            capture_output=True,
            text=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (four_gib, four_gib)),
            check=False,
        )

    done = audit(5_000_000)
    assert (done.returncode, done.stdout) == (2, "")
    assert one_line_error(done.stderr) == (
        f"error: {plan}: 4 cases × 1 candidate × 5000000 trials: 20000000 planned units"
        " (limit 13421772; raise it with --max-planned-units)"
    )
    assert audit(2).returncode == 0


@pytest.mark.parametrize(("rows", "trial_column"), [(2, False), (4, True)])
def test_a_units_table_is_held_to_the_planned_units_limit_at_its_boundary(rows: int, trial_column: bool) -> None:
    # Without a trial column each row is crossed with --trials (2 rows × 2 trials = 4 units); with one,
    # each row is a unit (4 rows).
    frame = pl.DataFrame(
        {"candidate": ["A"] * rows, "case_id": [f"q{i // 2 if trial_column else i}" for i in range(rows)]}
    )
    if trial_column:
        frame = frame.with_columns(trial=pl.Series([1, 2] * (rows // 2)))
    trials = 1 if trial_column else 2
    with limits(planned_units=4):
        assert Plan.from_frame(frame, trials=trials).n_units == 4
    with limits(planned_units=3), pytest.raises(LimitExceeded) as exc:
        Plan.from_frame(frame, trials=trials)
    assert (exc.value.limit, exc.value.allowed, exc.value.found, exc.value.flag) == (
        "planned_units",
        3,
        4,
        "--max-planned-units",
    )


def test_a_cases_plan_counts_distinct_cases_and_candidates() -> None:
    cases = pl.DataFrame({"case_id": ["q1", "q2", "q3"]})
    with limits(planned_units=6):
        assert Plan.from_frame(cases, candidates=["A", "B"], trials=1).n_units == 6
    with limits(planned_units=5), pytest.raises(LimitExceeded) as exc:
        Plan.from_frame(cases, candidates=["A", "B"], trials=1)
    assert exc.value.found == 6
    assert (
        exc.value.detail
        == "3 cases × 2 candidates × 1 trial: 6 planned units (limit 5; raise it with --max-planned-units)"
    )

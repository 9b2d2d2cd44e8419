"""Declared input limits (SPEC §6b): each an input error naming the file, the limit and the flag that raises it."""

from __future__ import annotations

import builtins
import importlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.errors import InputFormatError
from evalframe.importers import inspect_ai
from evalframe.importers._kit import ImportUnreadable
from evalframe.load import JSONLimitError, Limits, check_line_lengths, json_depth, limits, parse_json_text
from tests.conftest import FIXTURES

LOG_STREAMING = (
    FIXTURES / "real" / "inspect_ai" / "UKGovernmentBEIS-inspect_ai" / "tests" / "log" / "test_eval_log"
) / "log_streaming.eval"


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def one_line_error(err: str) -> str:
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err.rstrip("\n")


def audit(tmp_path: Path, results: Path, *limit_flags: str) -> tuple[int, str, str]:
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\nq1\nq2\n", encoding="utf-8")
    return run([*limit_flags, "audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"])


def test_the_defaults_are_documented_values() -> None:
    assert Limits() == Limits(line_bytes=64 * 2**20, json_depth=512, member_bytes=256 * 2**20, archive_bytes=2 * 2**30)
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

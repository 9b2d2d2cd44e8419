"""Hostile or broken input (SPEC §3, §6b): text from the input is shown as written, a bad file is exit 2."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import NoReturn

import polars as pl
import pytest

from evalframe.audit import audit
from evalframe.cli import inputs as cli_inputs
from evalframe.errors import AuditRefused, ImportUnreadable, InputFormatError, PlanError
from evalframe.importers import promptfoo
from evalframe.load import collect_input, load
from evalframe.plan import Plan
from evalframe.report import AuditReport, markdown_code, markdown_table, markdown_text
from tests.cli.support import run
from tests.conftest import real

#: Case ids that are markup somewhere: rich (``[...]``), Markdown / HTML (``<``, ``|``, newline).
HOSTILE_IDS = [
    "test_add[int-1]",
    "[link=http://x]y[/link]",
    "a[/x]b",
    "<script>alert(1)</script>",
    "a|b",
    "line\nbreak",
]
#: How each id reads in a terminal table (control characters as escapes, markup as written).
TERMINAL = ["test_add[int-1]", "[link=http://x]y[/link]", "a[/x]b", "<script>alert(1)</script>", "a|b", "line\\nbreak"]
#: How each id is written in Markdown (renders as the id).
MARKDOWN = [
    "test_add\\[int-1\\]",
    "\\[link=http\\://x\\]y\\[/link\\]",
    "a\\[/x\\]b",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "a\\|b",
    "line\\nbreak",
]


def csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@pytest.fixture
def hostile(tmp_path: Path) -> list[str]:
    """A plan of the hostile ids, a ledger that grades the first one (the others are missing)."""
    plan, results = tmp_path / "plan.csv", tmp_path / "results.csv"
    plan.write_text("case_id\n" + "".join(f"{csv_field(i)}\n" for i in HOSTILE_IDS), encoding="utf-8")
    results.write_text(f"case_id,passed\n{csv_field(HOSTILE_IDS[0])},1\n", encoding="utf-8")
    return ["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"]


def test_markdown_text_escapes_what_markdown_would_read_as_markup() -> None:
    assert [markdown_text(i) for i in HOSTILE_IDS] == MARKDOWN
    assert markdown_text("x & `y` *z* ~w~ # ! \\") == "x &amp; \\`y\\` \\*z\\* \\~w\\~ \\# \\! \\\\"
    # GitHub links a bare URL (scheme://) and www.name: the ':' and the '.' are escaped (cmark-gfm renders the
    # escaped text as written, with no link; an e-mail address it still links).
    assert markdown_text("https://evil.example/q1 WWW.evil.example ftp://x.y") == (
        "https\\://evil.example/q1 WWW\\.evil.example ftp\\://x.y"
    )
    assert markdown_table(pl.DataFrame({"a|b": ["<i>|</i>"]})) == "| a\\|b |\n|---|\n| &lt;i&gt;\\|&lt;/i&gt; |"
    assert [markdown_code(v) for v in ("p.csv", "a`b", "``", "x\ny")] == ["`p.csv`", "``a`b``", "``` `` ```", "`x\\ny`"]


def test_hostile_ids_print_as_written_in_the_terminal_table(hostile: list[str]) -> None:
    code, out, err = run(hostile)
    assert (code, err) == (0, "")
    row = next(line for line in out.splitlines() if "│ A " in line and "│       5 │" in line)
    listed = row.split("│")[4].strip()
    assert listed == ", ".join(TERMINAL[HOSTILE_IDS.index(i)] for i in sorted(HOSTILE_IDS[1:]))


def test_hostile_ids_in_a_refusal_table_print_as_written_without_a_markup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # short paths: the table fits the 200 columns of a non-terminal
    plan, results = Path("plan.csv"), Path("results.csv")
    plan.write_text("case_id\nq\n", encoding="utf-8")
    results.write_text("case_id,passed\n" + "".join(f"{csv_field(i)},1\n" for i in HOSTILE_IDS), encoding="utf-8")
    code, out, err = run(["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"])
    assert (code, out) == (1, "")
    assert err.startswith("batch refused: 6 refusing problem(s); no rate was computed.\n")
    table = [line for line in err.splitlines() if line.startswith("│ unknown_case │ results.csv")]
    rows = [[c.strip() for c in line.split("│")[3:9]] for line in table]
    expected = [[str(n), "A", t, "1", "1", f"case {t} is not in the plan"] for n, t in enumerate(TERMINAL, start=2)]
    assert sorted(rows) == sorted(expected)


def test_hostile_ids_in_markdown_and_html_reports(hostile: list[str], tmp_path: Path) -> None:
    code, out, _ = run([*hostile, "--format", "markdown"])
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("| A | 5 | 5 |")]
    assert row == "| A | 5 | 5 | " + ", ".join(MARKDOWN[HOSTILE_IDS.index(i)] for i in sorted(HOSTILE_IDS[1:])) + " |"
    # The headline, the missing-units table and the missing_unit note's detail name the id, escaped each time.
    assert "<script>" not in out and out.count("[link=") == out.count("\\[link=") == 3
    code, _, _ = run([*hostile, "--out", str(tmp_path / "out")])
    assert code == 0
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8").count(row) == 1
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # the only scripts are the explorer's own (its data, its code): an id is never one
    assert page.count("<script") == 2 and '<script id="ef-code">' in page and "<script>" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 1
    assert "line\nbreak" in page and "a|b" in page and "[link=http://x]y[/link]" in page


# --- broken input: exit 2 with one line naming the file and the reason, never a traceback (SPEC §6b) --------


def grades_parquet(path: Path, *, compression: str = "zstd") -> Path:
    frame = pl.DataFrame({"candidate": ["A"] * 300, "case_id": [f"q{i}" for i in range(300)], "passed": [1] * 300})
    frame.write_parquet(path, compression=compression, statistics=False)
    return path


def audit_results(tmp_path: Path, results: Path | str, *extra: str) -> tuple[int, str, str]:
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id\n" + "".join(f"q{i}\n" for i in range(300)), encoding="utf-8")
    return run(["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A", *extra])


def one_line_error(err: str) -> str:
    """The error line (exactly one line on stderr, no traceback)."""
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err.rstrip("\n")


def test_a_truncated_parquet_file_is_an_input_error(tmp_path: Path) -> None:
    good = grades_parquet(tmp_path / "good.parquet").read_bytes()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(good[: len(good) // 2])
    code, out, err = audit_results(tmp_path, bad)
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {bad}: not a valid Parquet file (ComputeError: parquet: File out of specification: "
        "The file must end with PAR1 or PARE); write it again"
    )


def test_flipped_bytes_in_a_parquet_footer_are_an_input_error(tmp_path: Path) -> None:
    data = bytearray(grades_parquet(tmp_path / "good.parquet").read_bytes())
    for i in range(len(data) - 40, len(data) - 8):  # inside the footer's metadata, before its length and PAR1
        data[i] ^= 0xFF
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    code, out, err = audit_results(tmp_path, bad)
    assert (code, out) == (2, "")
    assert one_line_error(err).startswith(f"error: {bad}: not a valid Parquet file (ComputeError: parquet: ")


def test_a_damaged_parquet_data_page_is_an_input_error(tmp_path: Path) -> None:
    data = bytearray(grades_parquet(tmp_path / "good.parquet", compression="uncompressed").read_bytes())
    at = data.index(b"q150")
    data[at - 4 : at] = b"\xff\xff\xff\x7f"  # the value's length prefix: the footer is intact, the page is not
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    code, out, err = audit_results(tmp_path, bad)
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {bad}: cannot read its rows (ComputeError: parquet: File out of specification: String data "
        "does not match given length); a file is damaged or cannot be read: write it again"
    )


def damaged_lake(lake: Path, files: int, damaged: int, *, ledger: bool = True) -> tuple[Path, Path]:
    """A lake of ``files`` grades files (10 rows each; cases only unless ``ledger``), file ``damaged`` broken."""
    for k in range(files):
        part = lake / f"part={k:03d}" / "p.parquet"
        part.parent.mkdir(parents=True)
        cases = [f"q{10 * k + i}" for i in range(10)]
        grades = {"candidate": ["A"] * 10, "passed": [1] * 10} if ledger else {}
        pl.DataFrame({"case_id": cases, **grades}).write_parquet(part, compression="uncompressed", statistics=False)
    bad = lake / f"part={damaged:03d}" / "p.parquet"
    data = bytearray(bad.read_bytes())
    at = data.index(b"q" + str(10 * damaged + 5).encode())
    data[at - 4 : at] = b"\xff\xff\xff\x7f"
    bad.write_bytes(bytes(data))
    return lake, bad


def test_a_damaged_page_in_one_file_of_a_lake_names_the_file(tmp_path: Path) -> None:
    lake, bad = damaged_lake(tmp_path / "lake", 30, 17)
    code, out, err = audit_results(tmp_path, lake)
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {bad}: cannot read its rows (ComputeError: parquet: File out of specification: String data "
        "does not match given length); a file is damaged or cannot be read: write it again"
    )
    plan_lake, bad = damaged_lake(tmp_path / "plan", 30, 17, ledger=False)
    with pytest.raises(InputFormatError) as caught:  # a plan lake the same way
        Plan.from_file(plan_lake, candidates=["A"])
    assert caught.value.path == str(bad)


def panicking_parquet(path: Path) -> Path:
    """A Parquet file whose footer is intact but whose last column's data page makes polars' reader panic."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 2000
    table = pa.table(
        {
            "candidate": ["A"] * rows,
            "case_id": [f"q{i % 2}" for i in range(rows)],
            "trial": list(range(1, rows + 1)),
            "passed": [i % 2 for i in range(rows)],
        }
    )
    pq.write_table(table, path, compression="none")
    at = pq.ParquetFile(path).metadata.row_group(0).column(3).data_page_offset + 40
    data = bytearray(path.read_bytes())
    data[at : at + 16] = bytes(16)  # inside the page's levels: the reader's length assertion fails
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("backtrace", [None, "1", "full"])
@pytest.mark.parametrize("in_lake", [False, True])
def test_a_reader_panic_shows_one_line_naming_the_file(tmp_path: Path, backtrace: str | None, in_lake: bool) -> None:
    import subprocess
    import sys

    if in_lake:
        for k in range(12):
            (tmp_path / "lake" / f"day={k:02d}").mkdir(parents=True)
            other = pl.DataFrame({"candidate": ["A"], "case_id": ["q0"], "trial": [2001 + k], "passed": [1]})
            other.write_parquet(tmp_path / "lake" / f"day={k:02d}" / "p.parquet")
        bad = panicking_parquet(tmp_path / "lake" / "day=05" / "p.parquet")
    else:
        bad = panicking_parquet(tmp_path / "bad.parquet")
    with pytest.raises(pl.exceptions.PanicException):  # the premise: polars panics on this page
        pl.read_parquet(bad)
    (tmp_path / "plan.csv").write_text("case_id\nq0\nq1\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    env |= {"RUST_BACKTRACE": backtrace} if backtrace else {}
    results = tmp_path / "lake" if in_lake else bad
    args = ["--plan", str(tmp_path / "plan.csv"), "--results", str(results), "--candidates", "A", "--trials", "2012"]
    done = subprocess.run(
        [sys.executable, "-m", "evalframe.cli", "audit", "--no-progress", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert "panicked" not in done.stderr and "backtrace" not in done.stderr
    assert one_line_error(done.stderr).startswith(f"error: {bad}: cannot read its rows (PanicException: ")


def test_a_panic_of_the_reader_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def panic(self: pl.LazyFrame, **kwargs: object) -> pl.DataFrame:
        raise pl.exceptions.PanicException("index out of bounds")

    monkeypatch.setattr(pl.LazyFrame, "collect", panic)
    with pytest.raises(InputFormatError) as caught:
        collect_input(pl.LazyFrame({"a": [1]}), "lake")
    assert str(caught.value) == (
        "lake: cannot read its rows (PanicException: index out of bounds); "
        "a file is damaged or cannot be read: write it again"
    )


def test_a_hive_part_with_an_extra_column_is_an_input_error(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    for candidate, frame in [
        ("A", pl.DataFrame({"case_id": ["q1"], "passed": [1]})),
        ("B", pl.DataFrame({"case_id": ["q1"], "passed": [1], "extra": ["x"]})),
    ]:
        (lake / f"candidate={candidate}").mkdir(parents=True)
        frame.write_parquet(lake / f"candidate={candidate}" / "part.parquet")
    code, out, err = audit_results(tmp_path, lake, "--candidates", "A,B")
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {lake}/candidate=B/part.parquet: its columns differ from those of {lake}/candidate=A/part.parquet "
        "(extra column(s) 'extra'); files of one input need one schema"
    )
    code, out, err = audit_results(tmp_path, lake, "--candidates", "A,B", "--partition-by", "candidate")
    assert (code, one_line_error(err)) == (2, f"error: {lake}/candidate=B/part.parquet: its columns differ from "
        f"those of {lake}/candidate=A/part.parquet (extra column(s) 'extra'); files of one input need one schema")


def test_a_hive_part_without_a_column_of_the_first_is_an_input_error(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    for candidate, frame in [
        ("A", pl.DataFrame({"case_id": ["q1"], "passed": [1], "extra": ["x"]})),
        ("B", pl.DataFrame({"case_id": ["q1"], "passed": [1]})),
        ("C", pl.DataFrame({"case_id": ["q1"], "passed": ["1"], "extra": ["x"]})),
    ]:
        (lake / f"candidate={candidate}").mkdir(parents=True)
        frame.write_parquet(lake / f"candidate={candidate}" / "part.parquet")
    code, out, err = audit_results(tmp_path, lake, "--candidates", "A,B,C")
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {lake}/candidate=B/part.parquet: its columns differ from those of {lake}/candidate=A/part.parquet "
        "(no column(s) 'extra'); files of one input need one schema"
    )
    (lake / "candidate=B" / "part.parquet").unlink()
    (lake / "candidate=B").rmdir()
    code, out, err = audit_results(tmp_path, lake, "--candidates", "A,C")
    assert one_line_error(err) == (
        f"error: {lake}/candidate=C/part.parquet: its columns differ from those of {lake}/candidate=A/part.parquet "
        "('passed' is String, not Int64); files of one input need one schema"
    )


@pytest.mark.parametrize("role", ["plan", "results"])
def test_deeply_nested_json_lines_are_an_input_error(tmp_path: Path, role: str) -> None:
    deep = tmp_path / f"{role}.jsonl"
    row = '{"candidate": "A", "case_id": "q1", "passed": 1}' if role == "results" else '{"case_id": "q1"}'
    deep.write_text(row + "\n" + '{"case_id": "q2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    other = tmp_path / ("results.csv" if role == "plan" else "plan.csv")
    other.write_text("case_id,passed\nq1,1\n" if role == "plan" else "case_id\nq1\n", encoding="utf-8")
    plan, results = (deep, other) if role == "plan" else (other, deep)
    code, out, err = run(["audit", "--plan", str(plan), "--results", str(results), "--candidates", "A"])
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {deep}:2: JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"
    )


def test_a_json_lines_integer_beyond_64_bits_is_refused_as_a_csv_cell_is(tmp_path: Path) -> None:
    """The integer is kept as its digits: the batch is refused with the problem row a CSV cell gets."""
    results = tmp_path / "results.jsonl"
    results.write_text(
        '{"candidate": "A", "case_id": "q1", "passed": 1, "trial": 1}\n'
        '{"candidate": "A", "case_id": "q2", "passed": 1, "trial": 9223372036854775808}\n',
        encoding="utf-8",
    )
    code, out, err = audit_results(tmp_path, results)
    assert (code, out) == (1, "")
    assert "batch refused: 1 refusing problem(s)" in err
    as_csv = tmp_path / "results.csv"
    as_csv.write_text("candidate,case_id,passed,trial\nA,q1,1,1\nA,q2,1,9223372036854775808\n", encoding="utf-8")
    plan = Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    problems = {}
    for path in (results, as_csv):
        with pytest.raises(AuditRefused) as info:
            audit(plan, path)
        refusing = info.value.problems.filter(pl.col("refusing"))
        problems[path.suffix] = refusing.select("kind", "case_id", "detail").rows()
        assert refusing.get_column("line").to_list() == [2 if path == results else 3]  # CSV: the header is 1
    detail = "trial = 9223372036854775808 is beyond the 64-bit integer range (at most 9223372036854775807)"
    assert problems[".jsonl"] == problems[".csv"] == [("invalid_integer", "q2", detail)]


def test_a_fifo_is_named_as_what_it_is(tmp_path: Path) -> None:
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    code, out, err = audit_results(tmp_path, fifo)
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        f"error: {fifo}: a named pipe (FIFO), not a regular file: evalframe reads files (write the data to one first)"
    )
    code, _, err = audit_results(tmp_path, tmp_path / "absent.csv")
    assert (code, one_line_error(err)) == (2, f"error: {tmp_path / 'absent.csv'}: no such file or directory")


def no_space(*args: object, **kwargs: object) -> NoReturn:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/tmp/evalframe-audit-x/units-0.parquet")


def test_a_full_disk_during_the_audit_is_exit_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_inputs, "audit", no_space)
    code, out, err = audit_results(tmp_path, tmp_path / "plan.csv")
    assert (code, out) == (2, "")
    assert one_line_error(err) == (
        "error: cannot write the audit's temporary files /tmp/evalframe-audit-x/units-0.parquet: "
        "No space left on device"
    )


def test_a_full_disk_writing_out_is_exit_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results.csv"
    results.write_text("case_id,passed\nq1,1\n", encoding="utf-8")
    monkeypatch.setattr(AuditReport, "write", no_space)
    code, _, err = audit_results(tmp_path, results, "--out", str(tmp_path / "out"), "--format", "json")
    assert code == 2
    assert one_line_error(err).startswith("error: cannot write the output folder: No space left on device")


# --- reserved names (SPEC §3): a column evalframe adds is refused, never overwritten ---------------------------


def test_a_csv_or_json_lines_column_named_like_one_the_loader_adds_is_refused(tmp_path: Path) -> None:
    ledger = tmp_path / "results.csv"
    ledger.write_text("case_id,passed,line,source\nq1,1,9,x\n", encoding="utf-8")
    loaded = load(ledger)
    assert loaded.problems.select("kind", "line", "detail").to_dicts() == [
        {
            "kind": "unexpected_column",
            "line": 1,
            "detail": "column 'line' is reserved: evalframe adds it (the row's line number); rename it",
        },
        {
            "kind": "unexpected_column",
            "line": 1,
            "detail": "column 'source' is reserved: evalframe adds it (the file the row came from); rename it",
        },
    ]
    assert loaded.frame.collect().to_dicts() == [{"case_id": "q1", "passed": "1", "line": 2, "source": str(ledger)}]
    jsonl = tmp_path / "results.jsonl"
    jsonl.write_text('{"case_id": "q1", "passed": 1}\n{"case_id": "q2", "passed": 1, "source": "x"}\n' * 2)
    problems = load(jsonl).problems
    assert problems.select("kind", "line").to_dicts() == [{"kind": "unexpected_column", "line": 2}]
    code, out, err = audit_results(tmp_path, ledger)
    assert (code, out) == (1, "")
    assert err.startswith("batch refused: 2 refusing problem(s); no rate was computed.\n")


def test_a_plan_column_named_line_or_source_is_refused(tmp_path: Path) -> None:
    csv_plan = tmp_path / "plan.csv"
    csv_plan.write_text("case_id,source\nq1,x\n", encoding="utf-8")
    with pytest.raises(PlanError) as caught:
        Plan.from_file(csv_plan, candidates=["A"])
    assert caught.value.problems.select("kind", "line", "detail").to_dicts() == [
        {
            "kind": "unexpected_column",
            "line": 1,
            "detail": "column 'source' is reserved: evalframe adds it (the file the row came from); rename it",
        }
    ]
    parquet_plan = tmp_path / "plan.parquet"
    pl.DataFrame({"case_id": ["q1"], "line": [7], "source": ["x"]}).write_parquet(parquet_plan)
    with pytest.raises(PlanError) as caught:
        Plan.from_file(parquet_plan, candidates=["A"])
    detail = "plan column {!r} is reserved: evalframe adds it to every row (SPEC §3 reserved names); rename it"
    assert caught.value.problems.select("kind", "source", "detail").to_dicts() == [
        {"kind": "unexpected_column", "source": str(parquet_plan), "detail": detail.format("line")},
        {"kind": "unexpected_column", "source": str(parquet_plan), "detail": detail.format("source")},
    ]
    with pytest.raises(PlanError) as caught:
        Plan.from_frame(pl.DataFrame({"case_id": ["q1"], "source": ["x"]}), candidates=["A"])
    assert caught.value.problems.select("kind", "detail").to_dicts() == [
        {"kind": "unexpected_column", "detail": detail.format("source")}
    ]


def test_a_key_repeated_in_a_json_lines_object_is_refused_naming_the_line(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        '{"case_id": "q1", "passed": 1}\n{"case_id": "q2", "passed": 0, "passed": 1, "x": {"k": 1, "k": 2}}\n',
        encoding="utf-8",
    )
    assert load(results).problems.select("kind", "line", "detail").to_dicts() == [
        {
            "kind": "repeated_column",
            "line": 2,
            "detail": "key 'passed' is repeated in the object (a JSON object names each column once)",
        }
    ]
    code, out, err = audit_results(tmp_path, results, "--extra-columns", "x")
    assert (code, out) == (1, "")
    assert err.startswith("batch refused: 1 refusing problem(s); no rate was computed.\n")


# --- an export file that cannot be read: exit 2, one line naming it, nothing written (SPEC §6b) -----------

LOG_STREAMING = real("inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval")
ARC_SONNET = real("inspect_ai/evaleval-every_eval_ever/tests/data/inspect/data_arc_sonnet.json")


def unreadable_export(tmp_path: Path, case: str) -> tuple[list[str], str]:
    """The arguments before the export path (format and flags) and the expected error line for ``case``."""
    if case == "member_bytes":  # an archive member larger than --max-member-bytes: refused from its recorded size
        head = ["--max-member-bytes", "100"]
        return [*head, "inspect", str(LOG_STREAMING)], (
            f"error: {LOG_STREAMING}!header.json: the archive member records 1998 bytes decompressed, "
            "more than 100 bytes (limit 100; raise it with --max-member-bytes)"
        )
    if case == "json_depth":
        deep = tmp_path / "deep.json"
        deep.write_text('{"results": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
        return ["promptfoo", str(deep)], (
            f"error: {deep}: JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"
        )
    if case == "utf8":
        folder = tmp_path / "lm"
        folder.mkdir()
        samples = folder / "samples_t_2025-01-01T00-00-00.000001.jsonl"
        samples.write_bytes(b'{"doc_id": 0, "acc": 1.0}\n\xff\xfe\n')
        return ["lm-eval", str(folder)], f"error: {samples}:2: not UTF-8 text (invalid start byte at byte 0)"
    assert case == "huge_integer"
    doc = json.loads(ARC_SONNET.read_text(encoding="utf-8"))
    doc["samples"][0]["epoch"] = 10**30
    log = tmp_path / "huge_epoch.json"
    log.write_text(json.dumps(doc), encoding="utf-8")
    return ["inspect", str(log)], f"error: {log}:1: samples[0] has no valid epoch (got {10**30})"


UNREADABLE = ["member_bytes", "json_depth", "utf8", "huge_integer"]


@pytest.mark.parametrize("command", ["import", "audit"])
@pytest.mark.parametrize("case", UNREADABLE)
def test_an_unreadable_export_file_is_exit_2_with_one_line_and_nothing_written(
    tmp_path: Path, case: str, command: str
) -> None:
    args, line = unreadable_export(tmp_path, case)
    *flags, fmt, path = args
    out = tmp_path / "out"
    if command == "import":
        code, stdout, err = run([*flags, "import", fmt, path, "--out", str(out)])
    else:
        code, stdout, err = run([*flags, "audit", "--from", fmt, path, "--format", "json", "--out", str(out)])
    assert (code, stdout) == (2, "")
    assert one_line_error(err) == line
    assert not out.exists()


@pytest.mark.parametrize("case", UNREADABLE)
def test_an_unreadable_export_file_leaves_an_earlier_output_as_it_was(tmp_path: Path, case: str) -> None:
    out = tmp_path / "out"
    code, _, err = run(["import", "inspect", str(ARC_SONNET), "--out", str(out)])
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    args, line = unreadable_export(tmp_path, case)
    *flags, fmt, path = args
    code, stdout, err = run([*flags, "import", fmt, path, "--out", str(out)])
    assert (code, stdout, one_line_error(err)) == (2, "", line)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(before) == [
        "evalframe-manifest.json",
        "exports.json",
        "ledger.parquet",
        "notes.parquet",
        "plan.parquet",
    ]


def test_unreadable_places_in_several_files_name_the_first_and_count_the_others(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text('{"results": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    second.write_bytes(b'{"results": "\xff"}')
    code, stdout, err = run(["import", "promptfoo", str(second), str(first), "--out", str(tmp_path / "out")])
    assert (code, stdout) == (2, "")
    assert one_line_error(err) == (
        f"error: {first}: JSON nested too deeply to read (limit 512; raise it with --max-json-depth) "
        "(and 1 more unreadable place(s))"
    )
    with pytest.raises(ImportUnreadable) as caught:
        promptfoo.read([second, first])
    assert (caught.value.path, caught.value.line, caught.value.other_files) == (str(first), None, [str(second)])
    assert caught.value.detail == "JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"
    # Only the files that could not be read: no empty plan or candidate list besides (nothing was read to plan).
    assert caught.value.notes.filter(pl.col("refusing")).select("kind", "source").rows() == [
        ("unreadable_file", str(first)),
        ("unreadable_file", str(second)),
    ]
    assert isinstance(caught.value, InputFormatError) and not isinstance(caught.value, AuditRefused)
    assert not (tmp_path / "out").exists()

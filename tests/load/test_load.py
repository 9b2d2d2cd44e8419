"""Strict loading: CSV structure, bytes, JSON Lines, Parquet files/dirs/globs."""

from __future__ import annotations

import csv
import importlib
from pathlib import Path

import polars as pl
import pytest

from evalframe.errors import InputFormatError
from evalframe.load import glob_files, is_glob, load, read_csv_strict, read_jsonl, scan_parquet


def kinds(problems: pl.DataFrame) -> list[tuple[str, int | None]]:
    return sorted(problems.select("kind", "line").iter_rows())


def test_bom_at_start_is_accepted(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_bytes(b"\xef\xbb\xbfcandidate,case_id,passed\r\nA,quote,1\r\n")
    loaded = read_csv_strict(p)
    assert loaded.problems.height == 0
    assert loaded.frame.collect().columns == ["candidate", "case_id", "passed", "line", "source"]
    assert loaded.frame.select("candidate", "line").collect().rows() == [("A", 2)]


def test_bom_elsewhere_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_bytes(b"candidate,case_id,passed\nA,\xef\xbb\xbfquote,1\n")
    assert kinds(read_csv_strict(p).problems) == [("misplaced_bom", 2)]


def test_undecodable_bytes_name_their_line(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_bytes(b"candidate,case_id,passed\nA,quote,1\nA,caf\xe9,1\nA,refund,0\n")
    loaded = read_csv_strict(p)
    assert kinds(loaded.problems) == [("undecodable_bytes", 3)]
    # The other records are still read so later checks can report on them.
    assert loaded.frame.select("line").collect().to_series().to_list() == [2, 3, 4]


def test_multiline_quoted_field_keeps_record_start_line(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text('case_id,answer\nq1,"two\nlines"\nq2,x\nq3\n')
    loaded = read_csv_strict(p)
    assert loaded.frame.select("case_id", "answer", "line").collect().rows() == [
        ("q1", "two\nlines", 2),
        ("q2", "x", 4),
    ]
    assert kinds(loaded.problems) == [("field_count", 5)]


def test_trailing_blank_lines_are_not_records(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("case_id\nq1\n\n\n")
    loaded = read_csv_strict(p)
    assert loaded.problems.height == 0
    assert loaded.frame.collect().height == 1


def test_empty_file_and_missing_file_are_input_errors(tmp_path: Path) -> None:
    p = tmp_path / "empty.csv"
    p.write_text("")
    with pytest.raises(InputFormatError, match="no header"):
        read_csv_strict(p)
    with pytest.raises(InputFormatError, match="cannot read"):
        read_csv_strict(tmp_path / "nope.csv")


def test_csv_never_modifies_its_input(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    raw = b"candidate,case_id,passed\nA,quote,true\n\n"
    p.write_bytes(raw)
    read_csv_strict(p)
    assert p.read_bytes() == raw


def test_jsonl_types_and_bad_lines(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text('{"case_id": 1, "passed": true, "score": NaN}\n\n[1]\n{"case_id": "x", "passed": false, "score": 1}\n')
    loaded = read_jsonl(p)
    frame = loaded.frame.collect()
    assert frame.schema["passed"] == pl.Boolean
    assert frame.schema["case_id"] == pl.String  # 1 and "x" mix → strings
    assert frame.get_column("line").to_list() == [1, 4]
    assert kinds(loaded.problems) == [("unreadable_file", 3)]


def test_jsonl_numbers_that_are_not_integers_are_read_as_written(tmp_path: Path) -> None:
    # 0.99999999999999999999 is the float 1.0: read as a number it became a pass (issue 45 item 6).
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"passed": 0.99999999999999999999, "score": 0.5, "n": 1, "plan_col": 1.10}\n'
        '{"passed": 1, "score": 1E+0, "n": 2, "plan_col": "x"}\n'
        '{"passed": NaN, "score": -Infinity, "n": 3, "plan_col": [1.10, true]}\n'
    )
    frame = read_jsonl(p).frame.collect()
    assert frame.schema["n"] == pl.Int64
    assert frame.select("passed", "score", "plan_col").rows() == [
        ("0.99999999999999999999", "0.5", "1.10"),
        ("1", "1E+0", "x"),
        ("NaN", "-Infinity", "[1.1, true]"),
    ]


def test_parquet_file_dir_glob_and_hive(tmp_path: Path) -> None:
    for cand, cases in (("A", ["q1", "q2"]), ("B", ["q1"])):
        d = tmp_path / "lake" / f"candidate={cand}"
        d.mkdir(parents=True)
        pl.DataFrame({"case_id": cases, "passed": [1] * len(cases)}).write_parquet(d / "part-0.parquet")
    lake = scan_parquet(tmp_path / "lake").frame.collect().sort("candidate", "case_id")
    assert lake.select("candidate", "case_id", "line").rows() == [("A", "q1", 1), ("A", "q2", 2), ("B", "q1", 1)]
    globbed = load(str(tmp_path / "lake" / "*" / "*.parquet")).frame.collect()
    assert globbed.height == 3
    with pytest.raises(InputFormatError, match="no such file"):
        scan_parquet(tmp_path / "missing")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputFormatError, match="not a valid Parquet file"):
        scan_parquet(bad)


def test_load_dispatches_by_suffix_and_stacks_lists(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    a.write_text("case_id,passed\nq1,1\n")
    b = tmp_path / "b.jsonl"
    b.write_text('{"case_id": "q2", "passed": 0}\n')
    both = load([a, b]).frame.collect()
    assert both.select("case_id", "source").rows() == [("q1", str(a)), ("q2", str(b))]


def test_truncated_parquet_is_one_clear_error(tmp_path: Path) -> None:
    good = tmp_path / "r.parquet"
    pl.DataFrame({"case_id": ["q1"] * 1000, "passed": [1] * 1000}).write_parquet(good)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(InputFormatError, match="not a valid Parquet file"):
        load(cut)


def test_own_outputs_keep_their_provenance_columns(tmp_path: Path) -> None:
    p = tmp_path / "ledger.parquet"
    pl.DataFrame({"case_id": ["q1"], "passed": [1], "line": [7], "source": ["logs/a.eval"]}).write_parquet(p)
    assert load(p).frame.select("line", "source").collect().rows() == [(7, "logs/a.eval")]


def test_text_globs_and_folders_are_stacked(tmp_path: Path) -> None:
    for name, case in (("a.csv", "q1"), ("b.csv", "q2")):
        (tmp_path / name).write_text(f"case_id,passed\n{case},1\n")
    assert load(str(tmp_path / "*.csv")).frame.select("case_id").collect().to_series().to_list() == ["q1", "q2"]
    assert load(tmp_path).frame.collect().height == 2
    pl.DataFrame({"case_id": ["q3"]}).write_parquet(tmp_path / "c.parquet")
    with pytest.raises(InputFormatError, match="both Parquet and CSV"):
        load(tmp_path)


def test_a_path_that_exists_is_read_as_itself_whatever_its_characters(tmp_path: Path) -> None:
    # `[1]` would be a character class; a file or folder of that very name is read as itself.
    plan = tmp_path / "plan [1].csv"
    plan.write_text("case_id\nquote\nrefund\n")
    assert not is_glob(plan)
    assert load(plan).frame.select("case_id", "line", "source").collect().rows() == [
        ("quote", 2, str(plan)),
        ("refund", 3, str(plan)),
    ]
    one = tmp_path / "r [1].parquet"
    pl.DataFrame({"case_id": ["q1", "q2"]}).write_parquet(one)
    assert load(one).frame.select("case_id", "line", "source").collect().rows() == [
        ("q1", 1, str(one)),
        ("q2", 2, str(one)),
    ]
    for cand, cases in (("A", ["q1", "q2"]), ("B", ["q1"])):
        d = tmp_path / "lake [1]" / f"candidate={cand}"
        d.mkdir(parents=True)
        pl.DataFrame({"case_id": cases}).write_parquet(d / "part [0].parquet")
    lake = load(tmp_path / "lake [1]")
    assert lake.partitions == ("candidate",)
    rows = lake.frame.select("candidate", "case_id", "line").collect().sort("candidate", "case_id").rows()
    assert rows == [("A", "q1", 1), ("A", "q2", 2), ("B", "q1", 1)]
    # A file a glob matched is read as itself too, brackets and all.
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "res [1].csv").write_text("case_id\nq1\n")
    (runs / "res2.csv").write_text("case_id\nq2\n")
    stacked = load(str(runs / "res*.csv")).frame.select("case_id", "source").collect().rows()
    assert stacked == [("q1", str(runs / "res [1].csv")), ("q2", str(runs / "res2.csv"))]


def test_a_bracket_pattern_that_names_nothing_is_a_glob(tmp_path: Path) -> None:
    for name, case in (("res1.csv", "q1"), ("res2.csv", "q2"), ("res3.csv", "q3")):
        (tmp_path / name).write_text(f"case_id\n{case}\n")
    pattern = str(tmp_path / "res[12].csv")
    assert is_glob(pattern)
    assert glob_files(pattern) == [str(tmp_path / "res1.csv"), str(tmp_path / "res2.csv")]
    assert load(pattern).frame.select("case_id").collect().to_series().to_list() == ["q1", "q2"]
    with pytest.raises(InputFormatError, match=r"res\[9\]\.csv: no \.parquet, \.csv or \.jsonl files found"):
        load(tmp_path / "res[9].csv")


def test_utf16_binary_and_huge_fields(tmp_path: Path) -> None:
    u16 = tmp_path / "u16.csv"
    u16.write_bytes("case_id\nq1\n".encode("utf-16"))
    with pytest.raises(InputFormatError, match="UTF-16"):
        read_csv_strict(u16)
    binary = tmp_path / "img.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(InputFormatError, match="not a text file"):
        read_csv_strict(binary)
    huge = tmp_path / "huge.csv"
    huge.write_text("case_id,answer\nq1," + "x" * 300_000 + "\n")
    loaded = read_csv_strict(huge)
    assert loaded.problems.height == 0
    assert loaded.frame.select(pl.col("answer").str.len_chars()).collect().item() == 300_000


def test_reading_a_csv_leaves_the_process_csv_field_limit_as_it_was(tmp_path: Path) -> None:
    # The csv module's field size limit is the process's: evalframe never changes it, also not while it reads.
    huge = tmp_path / "huge.csv"
    huge.write_text("case_id,answer\nq1," + "x" * 300_000 + "\n")
    before = csv.field_size_limit(1000)
    try:
        assert read_csv_strict(huge).frame.select(pl.col("answer").str.len_chars()).collect().item() == 300_000
        assert csv.field_size_limit() == 1000
    finally:
        csv.field_size_limit(before)
    assert csv.field_size_limit() == before == 131_072  # the module's default: no earlier read changed it


def test_records_read_in_batches_keep_their_lines_and_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Batches of 2 records: a blank line held across a batch boundary is still reported, trailing blanks are not.
    monkeypatch.setattr(importlib.import_module("evalframe.load.csv_strict"), "BATCH_RECORDS", 2)
    p = tmp_path / "r.csv"
    p.write_text("case_id,passed\nq1,1\nq2,0\n\nq3,1\nq4\nq5,0\nq6,1\n\n\n")
    loaded = read_csv_strict(p)
    assert loaded.frame.select("case_id", "passed", "line").collect().rows() == [
        ("q1", "1", 2),
        ("q2", "0", 3),
        ("q3", "1", 5),
        ("q5", "0", 7),
        ("q6", "1", 8),
    ]
    assert kinds(loaded.problems) == [("blank_line", 4), ("field_count", 6)]


@pytest.mark.parametrize("steps_up_to", [64, 0], ids=["steps over the row index", "lookup by file path"])
def test_lake_lines_count_from_one_in_every_file_with_filters_pushed_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps_up_to: int
) -> None:
    # The module (the package's ``load`` is the function).
    monkeypatch.setattr(importlib.import_module("evalframe.load.parquet"), "FILE_STEPS_UP_TO", steps_up_to)
    sizes = {"A": [3, 0, 2], "B": [1, 4]}  # an empty file starts where the next one does
    for cand, parts in sizes.items():
        d = tmp_path / "lake" / f"candidate={cand}"
        d.mkdir(parents=True)
        for i, n in enumerate(parts):
            ids = [f"{cand}{i}-{k}" for k in range(n)]
            pl.DataFrame({"case_id": ids}, schema={"case_id": pl.String}).write_parquet(d / f"part-{i}.parquet")
    loaded = scan_parquet(tmp_path / "lake")
    rows = loaded.frame.collect()
    expected = [(f"{c}{i}-{k}", k + 1) for c, parts in sizes.items() for i, n in enumerate(parts) for k in range(n)]
    assert rows.select("case_id", "line").rows() == expected
    assert rows.get_column("source").str.ends_with("part-2.parquet").sum() == 2
    only_b = loaded.frame.filter(pl.col("candidate") == "B")
    assert 'SELECTION: col("candidate") == "B"' in only_b.explain()  # the reader skips A's folder
    only_b = only_b.collect()
    assert only_b.select("case_id", "line").rows() == [r for r in expected if r[0].startswith("B")]
    last = loaded.frame.filter(pl.col("case_id") == "B1-3").select("line").collect().item()
    assert last == 4


def test_text_input_messages_name_the_right_line_and_encoding(tmp_path: Path) -> None:
    # Issue 45 item 10: a NUL in a CR-terminated CSV was reported at line 1, UTF-32 was called UTF-16.
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"candidate,case_id,passed\rA,q1,1\rA,q2,\x000\r")
    with pytest.raises(InputFormatError) as caught:
        read_csv_strict(cr)
    assert str(caught.value) == f"{cr}:3: binary data (a NUL byte): not a text file"
    for codec in ("utf-32", "utf-32-be"):
        wide = tmp_path / f"{codec}.csv"
        data = "case_id\nq1\n".encode(codec)
        wide.write_bytes(data if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") else b"\x00\x00\xfe\xff" + data)
        with pytest.raises(InputFormatError) as caught:
            read_csv_strict(wide)
        assert str(caught.value) == f"{wide}:1: UTF-32 text: save the file as UTF-8"


def test_a_lone_surrogate_escape_in_json_lines_is_an_unreadable_line(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    lines = ['{"case_id": "q1"}', '{"case_id": "q2\\ud83d\\ude00"}', '{"case_id": "q3\\ud800"}', '{"k\\uDFFF": 1}']
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = read_jsonl(p)
    assert loaded.frame.collect().select("case_id", "line").rows() == [("q1", 1), ("q2\U0001f600", 2)]
    assert loaded.problems.select("kind", "line", "detail").rows() == [
        ("unreadable_file", n, "a \\u escape names half of a UTF-16 surrogate pair, which is no character (not text)")
        for n in (3, 4)
    ]


def test_a_reserved_json_lines_key_is_reported_at_its_line(tmp_path: Path) -> None:
    import evalframe as ef

    p = tmp_path / "r.jsonl"
    rows = [
        '{"candidate": "A", "case_id": "q1", "passed": 1}',
        '{"candidate": "A", "case_id": "q2", "passed": 0, "line": 9}',
    ]
    p.write_text("\n".join(rows) + "\n")
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["q1", "q2"]}), candidates=["A"])
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, p)
    rows = refused.value.problems.filter(pl.col("refusing")).select("kind", "source", "line").rows()
    assert rows == [("unexpected_column", str(p), 2)]


def test_json_lines_read_in_batches_type_each_column_from_all_its_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of 2 objects. passed: integers in every batch (and absent from the second) stays Int64; ok:
    # booleans then an integer is text in every batch, each value as its JSON token; note: only in the last.
    monkeypatch.setattr(importlib.import_module("evalframe.load.jsonl"), "BATCH_OBJECTS", 2)
    p = tmp_path / "r.jsonl"
    p.write_text(
        '{"case_id": "q1", "passed": 1, "ok": true}\n'
        '{"case_id": "q2", "passed": 0, "ok": false}\n'
        '{"case_id": "q3"}\n'
        "\n"
        "[1]\n"
        '{"case_id": "q4", "ok": null}\n'
        '{"case_id": "q5", "passed": 1, "ok": 12, "note": 1.50}\n'
    )
    loaded = read_jsonl(p)
    frame = loaded.frame.drop("source").collect()
    assert frame.columns == ["case_id", "passed", "ok", "note", "line"]
    assert frame.dtypes == [pl.String, pl.Int64, pl.String, pl.String, pl.Int64]
    assert frame.rows() == [
        ("q1", 1, "true", None, 1),
        ("q2", 0, "false", None, 2),
        ("q3", None, None, None, 3),
        ("q4", None, None, None, 6),
        ("q5", 1, "12", "1.50", 7),
    ]
    assert kinds(loaded.problems) == [("unreadable_file", 5)]

"""Hostile or broken input (SPEC §3, §6b): text from the input is shown as written, a bad file is exit 2."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.report import markdown_code, markdown_table, markdown_text

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
    "\\[link=http://x\\]y\\[/link\\]",
    "a\\[/x\\]b",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "a\\|b",
    "line\\nbreak",
]


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


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
    assert "<script>" not in out and out.count("[link=") == out.count("\\[link=") == 2
    code, _, _ = run([*hostile, "--out", str(tmp_path / "out")])
    assert code == 0
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8").count(row) == 1
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 1
    assert "line\nbreak" in page and "a|b" in page and "[link=http://x]y[/link]" in page

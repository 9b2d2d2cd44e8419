"""ragas result CSVs -> plan + ledger: a failed metric is a grader failure, the question is the case."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalframe.cli import main
from evalframe.importers import ragas
from evalframe.importers._kit import ImportRefused
from tests.conftest import real

BOOKS = real("deepeval_ragas/JessicaGarson-Using-Ragas-with-Elasticsearch/ragas_evaluation.csv")
HEADER = "user_input,retrieved_contexts,response,reference,faithfulness,answer_relevancy\n"


def audit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--from", *args])
    return result.exit_code, result.stdout, result.stderr


def one_line(stderr: str) -> str:
    return " ".join(stderr.split())


def write(tmp_path: Path, text: str, name: str = "run.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_an_empty_cell_and_nan_are_grader_failures_not_missing_rows(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + 'q1,"[""a""]",r,g,0.5,\nq2,[],r,g,,0.9\nq3,[],r,g,nan,1.0\n')
    imported = ragas.read([path], score="faithfulness")
    rows = imported.ledger.select("case_id", "score_status", "score").rows()
    assert rows == [("q1", "scored", 0.5), ("q2", "judge_error", None), ("q3", "judge_error", None)]
    assert imported.plan.n_units == 3
    flags = imported.notes.filter(imported.notes["kind"] == "nonfinite_score").get_column("detail").to_list()
    assert flags == [
        "faithfulness: 2 case(s) have no value (NaN or an empty cell), read as a grader failure (judge_error): "
        "'q2', 'q3'"
    ]


def test_the_metric_must_be_chosen_and_a_wrong_name_refuses_naming_the_metrics(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "q1,[],r,g,0.5,0.7\n")
    with pytest.raises(ImportRefused) as exc:
        ragas.read([path])
    assert exc.value.problems.select("kind", "detail").rows() == [
        (
            "ambiguous_score",
            "2 metrics in the export (answer_relevancy, faithfulness) and none declared: name one with --score",
        )
    ]
    with pytest.raises(ImportRefused) as exc:
        ragas.read([path], score="faithfullness")
    assert exc.value.problems.get_column("detail").to_list() == [
        "no metric named 'faithfullness' in the export (has: answer_relevancy, faithfulness): "
        "name one with --score <metric>, e.g. --score faithfulness"
    ]


def test_text_columns_are_never_metrics_even_when_numeric(tmp_path: Path) -> None:
    path = write(tmp_path, "question,answer,ground_truth,faithfulness\nq1,42,42,1.0\nq2,7,8,0.0\n")
    imported = ragas.read([path])
    assert imported.info[0]["metrics"] == ["faithfulness"]
    assert imported.info[0]["id_column"] == "question"
    assert imported.ledger.select("case_id", "score").rows() == [("q1", 1.0), ("q2", 0.0)]


def test_a_declared_id_column_names_the_cases_through_the_cli(tmp_path: Path) -> None:
    path = write(tmp_path, "sample_id,user_input,faithfulness\ns-1,same question,1.0\ns-2,same question,0.0\n")
    code, out, err = audit("ragas", str(path), "--id-column", "sample_id", "--format", "json")
    assert code == 0, err
    assert '"planned": 2' in out and '"passed": 1' in out
    imported = ragas.read([path], id_column="sample_id")
    assert imported.ledger.get_column("case_id").to_list() == ["s-1", "s-2"]
    assert imported.info[0]["metrics"] == ["faithfulness"]


def test_the_same_question_twice_is_refused_as_a_duplicate_unit(tmp_path: Path) -> None:
    path = write(tmp_path, "user_input,faithfulness\nsame,1.0\nsame,0.0\n")
    code, _, err = audit("ragas", str(path), "--format", "json")
    assert code == 1
    assert "duplicate_key" in err


def test_the_rows_line_is_where_a_multiline_record_ends(tmp_path: Path) -> None:
    path = write(tmp_path, 'user_input,response,faithfulness\nq1,"two\nlines",1.0\nq2,one,0.0\n')
    assert ragas.read([path]).ledger.select("case_id", "line").rows() == [("q1", 3), ("q2", 4)]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("user_input,faithfulness\nq1,0.5,extra\n", ":2: a record with 3 fields under a header of 2"),
        ('user_input,faithfulness\n"q1,0.5\n', ":2: malformed CSV (unexpected end of data)"),
        (
            "response,faithfulness\nr,0.5\n",
            ":1: no question column (user_input, question, input) to name the cases: declare one with --id-column",
        ),
        ("", ": no header row: expected a CSV with one column per metric"),
    ],
)
def test_a_malformed_csv_is_an_input_error_naming_file_and_reason(tmp_path: Path, text: str, reason: str) -> None:
    path = write(tmp_path, text)
    code, out, err = audit("ragas", str(path), "--score", "faithfulness")
    assert (code, out) == (2, "")
    assert one_line(err) == f"error: {path}{reason}"


def test_bytes_that_are_not_utf8_are_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_bytes(b"user_input,faithfulness\n\xff,1\n")
    code, _, err = audit("ragas", str(path))
    assert code == 2
    assert one_line(err) == f"error: {path}: not UTF-8 text (invalid start byte at byte 24)"


def test_an_undeclared_id_column_and_a_misused_flag_are_usage_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "user_input,faithfulness\nq1,1.0\n")
    code, _, err = audit("ragas", str(path), "--id-column", "qid")
    assert (code, one_line(err)) == (2, f"error: {path}:1: no column 'qid' (the declared id column) in the header")
    code, _, err = audit("lighteval", str(path), "--id-column", "qid")
    assert code == 2
    assert one_line(err) == "error: id_column names the case column of ragas or deepeval exports only"


def test_the_real_books_csv_reads_four_questions() -> None:
    imported = ragas.read([BOOKS], score="context_recall")
    assert imported.ledger.get_column("score").to_list() == [1.0, 1.0, 0.0, 0.0]
    assert imported.info[0]["metrics"] == ["context_precision", "faithfulness", "context_recall"]


def test_id_column_without_from_is_a_usage_error() -> None:
    orbit = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "orbit_desk"
    args = ["audit", "--plan", str(orbit / "plan.csv"), "--results", str(orbit / "results.csv"), "--id-column", "q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "--id-column names a column of an export: it needs --from ragas or deepeval" in result.stderr


def test_numeric_scores_without_a_threshold_show_no_pass_rate_fractions_nor_nothing_scored(tmp_path: Path) -> None:
    """1 of 10 faithfulness values is filled: the rates with no value show "—", not 0 / 1 or 0 / 10, and the
    chart says why there is no pass rate (no threshold), not that nothing was scored."""
    path = real("deepeval_ragas/ciire-RAG_Project/eval_results_2026.csv")
    out = tmp_path / "out"
    code, _, _ = audit("ragas", str(path), "--score", "faithfulness", "--grade", "numeric", "--out", str(out))
    assert code == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    parts = markdown.split("Numerator / denominator of each rate:")[1].split("\n\n")[1].splitlines()
    assert parts[2] == "| eval_results_2026 | 10 / 10 | 1 / 10 | — | — | — |"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("no pass rate (no pass threshold declared)") == 1
    assert "nothing scored" not in page


def test_a_context_longer_than_the_csv_modules_field_limit_is_read_and_the_limit_left_as_it_was(
    tmp_path: Path,
) -> None:
    # A retrieved context of 200,000 characters is data: read whatever an earlier read left the csv module's
    # process-wide limit at (it was the 131,072 default unless a ledger CSV had been read first), then restored.
    path = write(tmp_path, HEADER + f"q1,[],{'x' * 200_000},g,0.5,0.9\n")
    before = csv.field_size_limit(1000)
    try:
        imported = ragas.read([path], score="faithfulness")
        assert csv.field_size_limit() == 1000
    finally:
        csv.field_size_limit(before)
    assert imported.ledger.select("case_id", "score").rows() == [("q1", 0.5)]

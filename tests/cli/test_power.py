"""`evalframe power`: text and JSON, hints on bad inputs, assumptions read from earlier runs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
from evalframe.cli import main
from evalframe.compare import compare
from evalframe.stats import pair_correlation_limit
from tests.stats.test_power import _batch


def _cli(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["power", *args])
    return result.exit_code, result.stdout, result.stderr


def test_power_command_text_and_json() -> None:
    code, out, _ = _cli(["--n-cases", "200", "--trials", "1", "--icc", "0.3", "--target-difference", "0.1"])
    assert code == 0
    assert out.splitlines()[0] == (
        "with 200 cases × 1 trial you can detect 14.3 points (80% power, two-sided α 0.05, baseline rate 0.5)"
    )
    assert "cases needed for a rise of 10.0 points at 1 trial(s) per case: 408" in out
    assert "trials vs cases: same budget of units" in out
    code, out, _ = _cli(["--n-cases", "200", "--trials", "3", "--icc", "0.3", "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    assert doc["detectable_difference"] == pytest.approx(0.102095, abs=5e-7)
    assert (doc["model"], doc["design_effect"], doc["cases_needed"]) == ("clustered_t", pytest.approx(1.6), None)
    budget = [(r["trials"], r["cases"]) for r in doc["trade"] if r["basis"] == "same_budget"]
    assert budget == [(1, 600), (2, 300), (3, 200), (5, 120), (10, 60)]


def test_power_command_detects_a_drop_where_a_rise_has_no_room() -> None:
    # 20 cases × 1 trial at 0.9: a rise has 10 points of room; a drop of 45.1 points is as detectable as a rise
    # of 45.1 from 0.1 (the two-sided test is symmetric under swapping pass and fail).
    code, out, _ = _cli(["--n-cases", "20", "--trials", "1", "--rate", "0.9", "--target-difference", "-0.3"])
    assert code == 0
    assert out.splitlines()[:2] == [
        "with 20 cases × 1 trial you can detect a drop of 45.1 points but no rise (80% power, two-sided α 0.05, "
        "baseline rate 0.9)",
        "cases needed for a drop of 30.0 points at 1 trial(s) per case: 37",
    ]
    code, out, _ = _cli(["--n-cases", "20", "--trials", "1", "--rate", "0.1"])
    assert out.splitlines()[0] == (
        "with 20 cases × 1 trial you can detect a rise of 45.1 points but no drop (80% power, two-sided α 0.05, "
        "baseline rate 0.1)"
    )
    code, out, _ = _cli(["--n-cases", "20", "--trials", "1", "--rate", "0.9", "--format", "json"])
    doc = json.loads(out)
    assert doc["detectable_difference"] == doc["detectable_drop"] == pytest.approx(0.450706, abs=5e-7)
    assert doc["detectable_rise"] is None
    assert doc["trade"][0]["detectable_difference"] == pytest.approx(0.450706, abs=5e-7)
    # the trade table names each row's direction: at 5 trials a rise of 9.2 points is in reach, beside a drop
    same = {
        r["trials"]: (r["detectable_rise"], r["detectable_drop"]) for r in doc["trade"] if r["basis"] == "same_cases"
    }
    assert same[1] == (None, pytest.approx(0.450706, abs=5e-7))
    assert same[5] == (pytest.approx(0.092492, abs=5e-7), pytest.approx(0.158171, abs=5e-7))
    code, out, _ = _cli(["--n-cases", "20", "--trials", "1", "--rate", "0.9"])
    header = next(line for line in out.splitlines() if "trials" in line and "cases_needed" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "trials",
        "cases",
        "units",
        "pair_correlation",
        "detectable_rise",
        "detectable_drop",
        "cases_needed",
    ]
    code, out, _ = _cli(["--n-cases", "20", "--trials", "1", "--rate", "0.1", "--target-difference", "0.3"])
    assert out.splitlines()[1] == "cases needed for a rise of 30.0 points at 1 trial(s) per case: 37"


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (["--n-cases", "200", "--rate", "1.2"], "error: rate must be in (0.0, 1.0), got 1.2", "--rate is the baseline"),
        (["--trials", "2"], "error: give --n-cases (or --from-units)", "--n-cases is the number of cases"),
        (["--n-cases", "200", "--pair-correlation", "0.4"], "error: a pair correlation of 0.4", "--pair-correlation"),
        (["--n-cases", "1"], "error: cases must be a whole number of at least 2, got 1", "--n-cases is"),
        (["--n-cases", "50", "--trade-trials", "1,x"], "error: --trade-trials '1,x' is not a list", "--trade-trials"),
        (["--n-cases", "50", "--target-difference", "0"], "error: target_difference must be in", "--target-diff"),
    ],
)
def test_power_command_bad_inputs_exit_2_with_a_hint(args: list[str], message: str, hint: str) -> None:
    code, out, err = _cli(args)
    assert (code, out) == (2, "")
    first, second = err.splitlines()
    assert first.startswith(message)
    assert second.startswith(f"hint: {hint}")


def test_power_command_reads_an_earlier_audit_and_compare(tmp_path: Path) -> None:
    plan, ledger = _batch(30, 4, seed=4)
    plan.cases.write_csv(tmp_path / "plan.csv")
    ledger.write_csv(tmp_path / "results.csv")
    common = ["--plan", str(tmp_path / "plan.csv"), "--results", str(tmp_path / "results.csv")]
    common += ["--candidates", "base,cand", "--trials", "4"]
    out = tmp_path / "out [1]"  # brackets in a path are its own characters, not a glob
    args = ["compare", *common, "--baseline", "base", "--candidate", "cand", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    report = ef.audit(plan, ledger)
    base = report.summary.filter(pl.col("candidate") == "base").row(0, named=True)
    r = compare(report, baseline="base", candidate="cand").table.item(0, "pair_correlation")
    units = str(out / "units.parquet")
    code, text, err = _cli(["--from-units", units, "--format", "json"])
    assert (code, text) == (2, "")
    assert err.splitlines()[0] == f"error: --from-units {units} holds candidates base, cand: give --candidate"
    code, text, err = _cli(["--from-units", units, "--candidate", "base", "--from-compare",
                            str(out / "comparison.parquet"), "--format", "json"])  # fmt: skip
    assert code == 0, err
    doc = json.loads(text)
    assert doc["inputs"] | {"icc": pytest.approx(base["icc"]), "rate": pytest.approx(base["pass_rate_scored"])} == {
        "cases": 30,
        "trials": 4,
        "alpha": 0.05,
        "power": 0.8,
        "rate": base["pass_rate_scored"],
        "icc": base["icc"],
        "pair_correlation": pytest.approx(min(r, pair_correlation_limit(base["icc"], 4))),
        "pair_trials": 4.0,
        "target_difference": None,
        "target": "sample",
    }
    assert doc["detectable_difference"] == pytest.approx(compare(report, baseline="base", candidate="cand").table.item(
        0, "detectable_difference"
    ))  # fmt: skip
    comparison = str(out / "comparison.parquet")
    assert doc["sources"][:4] == [
        f"read from --from-units {units}",
        f"read from --from-compare {comparison}",
        f"rate {base['pass_rate_scored']:.4g}: base's pass_rate_scored",
        f"icc {base['icc']:.4g}: base's intra-case correlation",
    ]
    # the library reads the same rows to the same numbers: the command only reads the files
    row = compare(report, baseline="base", candidate="cand").table.row(0, named=True)
    plan = ef.power(baseline=base, comparison=row).to_dict()
    assert plan | {"sources": doc["sources"]} == doc
    assert plan["sources"] == doc["sources"][2:]
    code, _, err = _cli(["--n-cases", "30", "--from-units", str(tmp_path / "plan.csv")])
    assert code == 2
    assert err.startswith(f"error: --from-units {tmp_path / 'plan.csv'}: not a readable units table")


def test_power_cases_is_the_target_as_in_audit_and_compare_and_a_count_there_names_n_cases() -> None:
    # One flag name, one meaning (issue 41): --cases is sample|fixed on audit, compare and power; the count is
    # --n-cases. The old spelling with a count is refused in one line that names the new flag, never reread.
    code, out, err = _cli(["--cases", "200", "--trials", "3"])
    assert (code, out) == (2, "")
    assert err == (
        "error: --cases 200: --cases is sample|fixed (what the power is about, as in audit and compare); "
        "give the number of cases as --n-cases 200\n"
    )
    code, out, err = _cli(["--n-cases", "20", "--cases", "every"])
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "error: --cases 'every' is not one of 'sample', 'fixed'"
    code, out, _ = _cli(["--n-cases", "20", "--trials", "5", "--icc", "0.3", "--cases", "sample", "--format", "json"])
    assert code == 0
    assert json.loads(out)["inputs"]["target"] == "sample"


def test_power_under_cases_fixed_is_the_within_case_t() -> None:
    # 20 cases × 5 trials, rate 0.5, icc 0.3, about these cases only: one pair difference varies by
    # σ_W² = (1 − 0.3)(0.25 + (0.5 + d)(0.5 − d)) and the test is t with 20 · 4 = 80 df (stats.detectable).
    from scipy.optimize import brentq
    from scipy.stats import nct
    from scipy.stats import t as student

    def by_hand(d: float) -> float:
        sd = ((1 - 0.3) * (0.25 + (0.5 + d) * (0.5 - d))) ** 0.5
        return float(nct.sf(student.ppf(0.975, 80) / (1 - d * d) ** 0.5, 80, d * 100**0.5 / sd))

    mde = brentq(lambda d: by_hand(d) - 0.8, 1e-6, 0.5)
    code, out, _ = _cli(["--n-cases", "20", "--trials", "5", "--icc", "0.3", "--cases", "fixed", "--format", "json"])
    assert code == 0
    doc = json.loads(out)
    assert (doc["model"], doc["inputs"]["target"]) == ("fixed_t", "fixed")
    assert doc["detectable_difference"] == pytest.approx(mde, abs=1e-6)
    assert doc["sentence"].startswith(f"with 20 cases × 5 trials you can detect {100 * mde:.1f} points about these 20 "
                                      "cases only (--cases fixed)")  # fmt: skip
    # one trial per case: no interval about fixed cases, so nothing is detectable and the note says why
    code, out, _ = _cli(["--n-cases", "200", "--cases", "fixed", "--format", "json"])
    doc = json.loads(out)
    assert doc["detectable_difference"] is None
    assert "none under --cases fixed with one trial per case" in doc["notes"][0]


def test_power_command_refuses_a_comparison_whose_pair_correlation_is_not_a_number(tmp_path: Path) -> None:
    # A hand-edited compare JSON with the correlation as a string was a TypeError traceback; it is a usage
    # error naming the file, with the hint for the comparison the library names.
    path = tmp_path / "c.json"
    path.write_text('[{"pair_correlation": "0.3", "pairs_used": 90, "cases_used": 30}]', encoding="utf-8")
    code, out, err = _cli(["--n-cases", "30", "--trials", "3", "--icc", "0.3", "--from-compare", str(path)])
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: --from-compare {path}: the comparison has no pair correlation (numeric scores, or under 3 cases)",
        "hint: give --pair-correlation, or --from-compare a comparison of pass/fail grades",
    ]


def test_power_from_the_units_of_several_tasks_reads_one_task_never_the_pool(tmp_path: Path) -> None:
    # Two tasks reusing case ids: pooled, their 40 cases would read as 40 cases × 6 trials. --task names one,
    # and the numbers are those of that task's summary row, as ef.power reads it.
    plan, ledger = _batch(40, 3, seed=4)
    other = ledger.with_columns(pl.col("passed").shuffle(seed=1))
    cases = pl.concat([plan.cases.with_columns(task=pl.lit(t)) for t in ("t1", "t2")])
    tasked = ef.Plan.from_frame(cases, candidates=["base", "cand"], trials=3)
    both = pl.concat([ledger.with_columns(task=pl.lit("t1")), other.with_columns(task=pl.lit("t2"))])
    report = ef.audit(tasked, both)
    report.write(tmp_path / "out")
    units = str(tmp_path / "out" / "units.parquet")
    code, out, err = _cli(["--from-units", units, "--candidate", "base", "--format", "json"])
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"error: --from-units {units} holds tasks t1, t2: give --task"
    code, out, err = _cli(["--from-units", units, "--candidate", "base", "--task", "t2", "--format", "json"])
    assert code == 0, err
    row = report.summary.filter((pl.col("task") == "t2") & (pl.col("candidate") == "base"))
    doc = json.loads(out)
    assert doc["inputs"] == ef.power(baseline=row).to_dict()["inputs"]
    assert (doc["inputs"]["cases"], doc["inputs"]["trials"]) == (40, 3)
    assert doc["inputs"]["rate"] == row.item(0, "pass_rate_scored")
    code, _, err = _cli(["--from-units", units, "--candidate", "base", "--task", "t3"])
    assert (code, err.splitlines()[0]) == (2, f"error: --task 't3' is not in --from-units {units} (tasks: t1, t2)")


def test_power_refuses_a_units_table_whose_columns_do_not_compute(tmp_path: Path) -> None:
    # A score column of text: the funnel cannot sum it; one line naming the file, not the query plan.
    path = tmp_path / "units.parquet"
    pl.DataFrame({"candidate": ["A", "A"], "case_id": ["a", "b"], "outcome": ["passed", "failed"], "score": ["1", "0"]}
                 ).write_parquet(path)  # fmt: skip
    code, out, err = _cli(["--from-units", str(path)])
    assert (code, out) == (2, "")
    assert err == f"error: --from-units {path}: not an audit's units table (InvalidOperationError)\n"


def test_power_reads_a_compare_json_within_the_limits_of_every_json_input(tmp_path: Path) -> None:
    # --max-json-depth applies to --from-compare as to every JSON input; too deep is one line, not a traceback.
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 600 + "]" * 600, encoding="utf-8")
    args = ["--n-cases", "30", "--trials", "3", "--icc", "0.3", "--from-compare"]
    code, out, err = _cli([*args, str(deep)])
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        f"error: --from-compare {deep}: JSON nested too deeply to read (limit 512; raise it with --max-json-depth)"
    )
    nested = tmp_path / "c.json"  # depth 5: a list, a row, and three lists
    nested.write_text('[{"pair_correlation": 0.2, "pairs_used": 90, "cases_used": 30, "x": [[[1]]]}]', encoding="utf-8")
    assert _cli([*args, str(nested)])[0] == 0
    result = CliRunner().invoke(main, ["--max-json-depth", "3", "power", *args, str(nested)])
    assert (result.exit_code, result.stderr.splitlines()[0]) == (
        2,
        f"error: --from-compare {nested}: JSON nested too deeply to read (limit 3; raise it with --max-json-depth)",
    )

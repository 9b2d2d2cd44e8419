"""The retry audit (issue 43 item 4): pass rate by attempt number, and the headline under first vs declared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.attempts import attempt_rates, retry_bias
from evalframe.stats import rate_interval
from tests.conftest import readme_example

#: Four cases, one trial each: q and t fail to run on attempt 1 and pass on attempt 2; r fails and s passes at once.
RETRIED = [
    ("q", 1, 1, "error", "not_scored", None), ("q", 1, 2, "completed", "scored", 1),
    ("r", 1, 1, "completed", "scored", 0),
    ("s", 1, 1, "completed", "scored", 1),
    ("t", 1, 1, "timeout", "not_scored", None), ("t", 1, 2, "completed", "scored", 1),
]  # fmt: skip


def _audit(rows: list[tuple[str, int, int, str, str, int | None]], retry: str) -> ef.AuditReport:
    cases = sorted({r[0] for r in rows})
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["A"])
    ledger = pl.DataFrame(
        [("A", *r) for r in rows],
        schema=["candidate", "case_id", "trial", "attempt", "exec_status", "score_status", "passed"],
        orient="row",
    )
    return ef.audit(plan, ledger, retry=retry)  # type: ignore[arg-type]


def test_attempt_rates_count_each_attempt_number_and_cluster_by_case() -> None:
    out = attempt_rates(_audit(RETRIED, "last_allowed").attempts)
    assert out.select("candidate", "attempt", "attempted", "scored", "passed", "cases").rows() == [
        ("A", 1, 4, 2, 1, 2),
        ("A", 2, 2, 2, 2, 2),
    ]
    assert out.get_column("pass_rate_scored").to_list() == [0.5, 1.0]
    # One scored attempt per case: the interval is the Wilson one of 1/2 and of 2/2.
    for row, (k, n) in zip(out.iter_rows(named=True), [(1, 2), (2, 2)], strict=True):
        expected = rate_interval([1] * k + [0] * (n - k), [1] * n)
        assert (row["pass_rate_scored_ci_low"], row["pass_rate_scored_ci_high"]) == (expected.ci_low, expected.ci_high)


def test_retry_bias_counts_passes_under_first_and_declared() -> None:
    rows = [
        ("q", 1, 1, "error", "not_scored", None), ("q", 1, 2, "completed", "scored", 1),
        ("r", 1, 1, "completed", "scored", 0),
        ("s", 1, 1, "completed", "scored", 1),
    ]  # fmt: skip
    row = retry_bias(_audit(rows, "last_allowed").attempts).row(0, named=True)
    # first: r (fail) and s (pass) scored, q's first attempt errored; declared: q's retry passes too.
    assert (row["first_passed"], row["first_scored"], row["declared_passed"], row["declared_scored"]) == (1, 2, 2, 3)
    assert row["difference"] == pytest.approx(2 / 3 - 1 / 2)
    assert row["retry_bias"] is False and row["note"] is None  # three cases cannot show it


def test_report_holds_its_retry_bias_table_once_for_notes_and_view() -> None:
    rows = [
        ("q", 1, 1, "error", "not_scored", None), ("q", 1, 2, "completed", "scored", 1),
        ("r", 1, 1, "completed", "scored", 0),
        ("s", 1, 1, "completed", "scored", 1),
    ]  # fmt: skip
    report = _audit(rows, "last_allowed")
    # The same counts as above (first 1/2, declared 2/3), held by the report: the view's retry table reads them.
    held = report.retry_bias.select("candidate", "first_passed", "first_scored", "declared_passed", "declared_scored")
    assert held.rows() == [("A", 1, 2, 2, 3)]
    assert report.view().crosscheck.retry_headline.row(0)[1:3] == ("0.500 (1/2)", "0.667 (2/3)")
    # No unit retried: no rows, no retry table.
    plain = _audit([("r", 1, 1, "completed", "scored", 0), ("s", 1, 1, "completed", "scored", 1)], "last_allowed")
    assert plain.retry_bias.height == 0 and plain.view().crosscheck.retry_headline.height == 0


def test_report_of_two_tasks_holds_every_tasks_retry_bias_once_a_unit_was_retried() -> None:
    # Task "a": a/1 errors then passes on attempt 2, a/2 fails; task "b": b/1 passes at once (no retry).
    cases = pl.DataFrame({"case_id": ["a/1", "a/2", "b/1"], "task": ["a", "a", "b"]})
    plan = ef.Plan.from_frame(cases, candidates=["A"])
    ledger = pl.DataFrame(
        [("A", "a/1", 1, "error", None), ("A", "a/1", 2, "completed", 1), ("A", "a/2", 1, "completed", 0),
         ("A", "b/1", 1, "completed", 1)],
        schema=["candidate", "case_id", "attempt", "exec_status", "passed"],
        orient="row",
    )  # fmt: skip
    report = ef.audit(plan, ledger, retry="last_allowed")
    columns = ("task", "candidate", "first_passed", "first_scored", "declared_passed", "declared_scored")
    # a: first 0/1 (a/1's first attempt errored), declared 1/2; b: 1/1 both ways.
    assert report.retry_bias.select(columns).rows() == [("a", "A", 0, 1, 1, 2), ("b", "A", 1, 1, 1, 1)]
    assert [r.retry_bias.height for r in report.by_task().values()] == [1, 0]  # b alone retried nothing


def _attempts(rng: np.random.Generator, cases: int, trials: int, *, until_pass: bool) -> pl.DataFrame:
    """Attempts under last_allowed: a first attempt errors with probability 0.3 whatever the case, and is retried.

    Independent: each retry errors with probability 0.3 too (up to 3 attempts), else passes with the case's p.
    Retry until pass: a retried unit is retried until it passes, its failed retries reported as errors (the
    third attempt is kept whatever it is), so a retried unit keeps the best of two draws.
    """
    p = rng.beta(2, 2, size=cases)
    rows = []
    for c in range(cases):
        for t in range(1, trials + 1):
            for a in range(1, 4):
                passes = bool(rng.random() < p[c])
                if a == 1 or not until_pass:
                    errored = a < 3 and rng.random() < 0.3
                else:
                    errored = not passes and a < 3
                rows.append((f"c{c}", t, a, not errored, passes and not errored))
                if not errored:
                    break
    frame = pl.DataFrame(rows, schema=["case_id", "trial", "attempt", "scored", "passed"], orient="row")
    last = pl.col("attempt") == pl.col("attempt").max().over("case_id", "trial")
    return frame.select(
        pl.lit("A").alias("candidate"),
        "case_id",
        "trial",
        "attempt",
        pl.when("scored").then(pl.lit("scored")).otherwise(pl.lit("not_scored")).alias("score_status"),
        pl.when("scored").then(pl.col("passed")).alias("passed"),
        last.alias("counts"),
    )


def test_independent_retries_raise_no_retry_bias_at_alpha() -> None:
    # 60 cases × 3 trials; measured 0.047 on 1000 seeds.
    seeds, alpha = 1000, 0.05
    flagged = sum(
        bool(retry_bias(_attempts(np.random.default_rng(s), 60, 3, until_pass=False)).item(0, "retry_bias"))
        for s in range(seeds)
    )
    assert flagged / seeds <= alpha + 3 * (alpha * (1 - alpha) / seeds) ** 0.5


def test_a_retry_until_pass_pattern_is_flagged() -> None:
    seeds = 50
    outs = [retry_bias(_attempts(np.random.default_rng(s), 150, 3, until_pass=True)) for s in range(seeds)]
    assert sum(bool(o.item(0, "retry_bias")) for o in outs) / seeds >= 0.9
    row = outs[0].row(0, named=True)
    rd, rf = row["declared_passed"] / row["declared_scored"], row["first_passed"] / row["first_scored"]
    assert (row["declared_rate"], row["first_rate"]) == (rd, rf)
    assert row["note"].startswith(f"{round((rd - rf) * row['declared_scored']):+d} passes from retries: ")


def test_cases_that_all_moved_alike_are_no_evidence_until_enough_of_them_did() -> None:
    # Each case fails its first attempt and passes its second (retry every, 2 attempts): the linearized
    # variance is 0, so the interval is [0.5, 0.5]; the sign test over 2 cases (p = 0.5) withholds the flag,
    # over 6 (p = 2 / 64 = 0.03125) it stands.
    def batch(n: int) -> pl.DataFrame:
        rows = [(f"c{i}", 1, a, "completed", "scored", a - 1) for i in range(n) for a in (1, 2)]
        return retry_bias(_audit(rows, "every").attempts)

    two, six = batch(2).row(0, named=True), batch(6).row(0, named=True)
    assert (two["difference"], two["ci_low"], two["ci_high"], two["retry_bias"]) == (0.5, 0.5, 0.5, False)
    assert two["note"] is None
    assert (six["difference"], six["retry_bias"]) == (0.5, True)


def test_the_readme_example_prints_what_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    code, shown = readme_example("retries-example")
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own example, run as written
    assert capsys.readouterr().out == shown
    # From the ledger: attempt 1 of q, r, s, t, of which r (fail) and s (pass) scored; attempt 2 of q and t,
    # both passed. Under first 1 pass of 2 scored; under last_allowed q and t count their passing retries: 3 of 4.
    assert shown.splitlines() == ["[(1, 4, 2, 1, 0.5), (2, 2, 2, 2, 1.0)]", "(1, 2, 3, 4, False)"]


def _ledger(attempts: pl.DataFrame) -> pl.DataFrame:
    """The simulated attempts as a ledger: an unscored attempt errored, a scored one completed with its grade."""
    scored = pl.col("score_status") == "scored"
    return attempts.select(
        "candidate",
        "case_id",
        "trial",
        "attempt",
        pl.when(scored).then(pl.lit("completed")).otherwise(pl.lit("error")).alias("exec_status"),
        "score_status",
        pl.col("passed").cast(pl.Int64),
    )


def test_the_audit_notes_a_retry_until_pass_pattern(tmp_path: Path) -> None:
    simulated = _attempts(np.random.default_rng(0), 150, 3, until_pass=True)
    cases = simulated.get_column("case_id").unique().sort().to_list()
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": cases}), candidates=["A"], trials=3)
    report = ef.audit(plan, _ledger(simulated), retry="last_allowed")
    # From the simulated rows: passes over scored among first attempts, and among each unit's last attempt.
    first = simulated.filter(pl.col("attempt") == 1)
    last = simulated.filter("counts")
    pf, sf = int(first.get_column("passed").sum()), int((first.get_column("score_status") == "scored").sum())
    pd_, sd = int(last.get_column("passed").sum()), int((last.get_column("score_status") == "scored").sum())
    rf, rd = pf / sf, pd_ / sd
    (note,) = report.problems.filter(pl.col("kind") == "retry_bias").iter_rows(named=True)
    assert (note["candidate"], note["refusing"]) == ("A", False)
    said = f"{round((rd - rf) * sd):+d} passes from retries: pass_rate_scored {rd:.3g} ({pd_}/{sd}) under the "
    assert note["detail"].startswith(said + f"declared policy, {rf:.3g} ({pf}/{sf}) under first; ")
    # The rate by attempt number: attempt 1 is every unit's first attempt.
    one = report.attempt_rates.filter(pl.col("attempt") == 1).row(0, named=True)
    assert (one["attempted"], one["scored"], one["passed"]) == (first.height, sf, pf)


def test_attempt_rates_are_written_only_when_a_unit_was_retried(tmp_path: Path) -> None:
    names = [p.name for p in _audit(RETRIED, "last_allowed").write(tmp_path / "retried")]
    assert "attempt_rates.parquet" in names
    written = pl.read_parquet(tmp_path / "retried" / "attempt_rates.parquet")
    # Attempt 1: q, r, s, t, of which r (fail) and s (pass) scored; attempt 2: q and t, both passed.
    assert written.select("candidate", "attempt", "attempted", "scored", "passed").rows() == [
        ("A", 1, 4, 2, 1),
        ("A", 2, 2, 2, 2),
    ]
    once = _audit([r for r in RETRIED if r[2] == 1], "first")
    assert once.attempt_rates.height == 0
    assert once.problems.filter(pl.col("kind") == "retry_bias").height == 0
    assert "attempt_rates.parquet" not in [p.name for p in once.write(tmp_path / "once")]

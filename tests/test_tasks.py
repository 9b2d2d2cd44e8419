"""Tasks are keys (SPEC §1, issue 40): every number is per (task, candidate), never pooled over tasks.

Every expected number below is counted by hand from the frames written here, or read from the real
sample files with plain ``json`` (never from evalframe).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.errors import AuditRefused, OptionError
from evalframe.problems import PROBLEM_KINDS
from tests.conftest import real

#: belief: b1, b2, b3; desire: d1, d2. Candidates A and B plan every case of both tasks.
CASES = pl.DataFrame(
    {"case_id": ["d2", "b1", "d1", "b3", "b2"], "task": ["desire", "belief", "desire", "belief", "belief"]}
)
#: A: b1 pass, b2 fail, b3 no row; d1 pass, d2 pass.  B: b1, b2, b3 pass; d1 fail, d2 no row.
LEDGER = pl.DataFrame(
    {
        "candidate": ["A", "A", "A", "A", "B", "B", "B", "B"],
        "case_id": ["b1", "b2", "d1", "d2", "b1", "b2", "b3", "d1"],
        "passed": [1, 0, 1, 1, 1, 1, 1, 0],
    }
)
TABLES = ("summary", "units", "attempts", "problems", "slices", "missingness")


def plan_of(cases: pl.DataFrame = CASES) -> ef.Plan:
    return ef.Plan.from_frame(cases, candidates=["A", "B"])


def frames(report: ef.AuditReport) -> dict[str, pl.DataFrame]:
    return {name: getattr(report, name).lazy().collect() for name in TABLES}


def test_two_tasks_give_one_summary_row_per_task_and_candidate_with_its_own_counts() -> None:
    report = ef.audit(plan_of(), LEDGER)
    names = ("task", "candidate", "planned", "scored", "passed", "missing", "pass_rate_scored", "pass_rate_planned")
    assert report.summary.columns[:2] == ["task", "candidate"]
    assert report.summary.select(names).rows() == [
        ("belief", "A", 3, 2, 1, 1, 1 / 2, 1 / 3),
        ("belief", "B", 3, 3, 3, 0, 1.0, 1.0),
        ("desire", "A", 2, 2, 2, 0, 1.0, 1.0),
        ("desire", "B", 2, 1, 0, 1, 0.0, 0.0),
    ]
    assert report.meta["tasks"] == ["belief", "desire"]
    for name in ("units", "attempts", "problems"):
        table = getattr(report, name)
        assert table.columns[0] == "task", name
        assert table.schema["task"] == pl.String, name
    assert report.units.select("task", "candidate", "case_id", "outcome").rows() == [
        ("belief", "A", "b1", "passed"),
        ("belief", "A", "b2", "failed"),
        ("belief", "A", "b3", "missing"),
        ("belief", "B", "b1", "passed"),
        ("belief", "B", "b2", "passed"),
        ("belief", "B", "b3", "passed"),
        ("desire", "A", "d1", "passed"),
        ("desire", "A", "d2", "passed"),
        ("desire", "B", "d1", "failed"),
        ("desire", "B", "d2", "missing"),
    ]
    # missing units: one note per (task, candidate) that misses one
    assert report.problems.select("task", "kind", "candidate").rows() == [
        ("belief", "missing_unit", "A"),
        ("desire", "missing_unit", "B"),
    ]


def test_by_task_is_the_audit_of_each_task_alone() -> None:
    plan = plan_of()
    report = ef.audit(plan, LEDGER)
    tasks = report.by_task()
    assert list(tasks) == ["belief", "desire"]
    for task, own in tasks.items():
        numbered = LEDGER.with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int64))
        rows = numbered.filter(pl.col("case_id").str.starts_with(task[0]))  # each row keeps its line
        alone = ef.audit(plan.for_task(task), rows)
        assert "task" not in own.summary.columns
        for name, table in frames(alone).items():
            assert frames(own)[name].equals(table), (task, name)
        assert own.meta["plan_hash"] == alone.meta["plan_hash"]
    combined = frames(report)
    for name in ("summary", "units", "attempts"):
        glued = pl.concat([frames(r)[name].select(pl.lit(t).alias("task"), pl.all()) for t, r in tasks.items()])
        assert combined[name].equals(glued), name


def test_one_task_changes_nothing_in_any_table() -> None:
    one = CASES.filter(pl.col("task") == "belief")
    ledger = LEDGER.filter(pl.col("case_id").str.starts_with("b"))
    with_column = ef.audit(plan_of(one), ledger, slices=[])
    without = ef.audit(plan_of(one.drop("task")), ledger)
    for name, table in frames(without).items():
        assert frames(with_column)[name].equals(table), name
    assert "tasks" not in with_column.meta
    assert list(with_column.by_task()) == [""]
    assert with_column.summary.select("planned", "scored", "passed").rows() == [(3, 2, 1), (3, 3, 3)]


def test_tasks_are_in_natural_order() -> None:
    cases = pl.DataFrame({"case_id": ["x", "y", "z"], "task": ["t10", "t9", "t10"]})
    ledger = pl.DataFrame({"candidate": ["A"] * 3, "case_id": ["x", "y", "z"], "passed": [1, 0, 1]})
    report = ef.audit(ef.Plan.from_frame(cases, candidates=["A"]), ledger)
    assert report.summary.select("task", "planned", "passed").rows() == [("t9", 1, 0), ("t10", 2, 2)]


def test_refusal_gathers_every_task_problem_and_unknown_task_with_its_line() -> None:
    ledger = pl.DataFrame(
        {
            "candidate": ["A", "A", "A", "A", "B"],
            "case_id": ["b1", "d9", "b2", "d1", "d1"],
            "task": ["belief", "desire", "intention", "desire", "desire"],
            "passed": [2, 1, 1, 1, 1],
        }
    )  # lines 1..5: a bad grade in belief, a case desire does not have, a task the plan does not have
    with pytest.raises(AuditRefused) as refused:
        ef.audit(plan_of(), ledger)
    found = refused.value.problems.filter(pl.col("refusing")).select("task", "kind", "line", "case_id")
    assert found.rows() == [
        (None, "unknown_task", 3, "b2"),
        ("belief", "invalid_grade", 1, "b1"),
        ("desire", "unknown_case", 2, "d9"),
    ]
    detail = refused.value.problems.filter(pl.col("kind") == "unknown_task").get_column("detail").item()
    assert detail == "the row of (A, b2) names the task 'intention', which is not planned (tasks: belief, desire)"
    assert "unknown_task" in PROBLEM_KINDS


def test_a_row_whose_case_is_in_no_task_is_one_unknown_case() -> None:
    ledger = LEDGER.vstack(pl.DataFrame({"candidate": ["A"], "case_id": ["zz"], "passed": [1]}))
    with pytest.raises(AuditRefused) as refused:
        ef.audit(plan_of(), ledger)
    refusing = refused.value.problems.filter(pl.col("refusing"))
    assert refusing.select("task", "kind", "line", "case_id").rows() == [(None, "unknown_case", 9, "zz")]


def test_the_ledger_task_column_routes_rows_as_the_case_map_does() -> None:
    tasks = {"b": "belief", "d": "desire"}
    labelled = LEDGER.with_columns(pl.col("case_id").str.slice(0, 1).replace_strict(tasks).alias("task"))
    for name, table in frames(ef.audit(plan_of(), LEDGER)).items():
        assert frames(ef.audit(plan_of(), labelled))[name].equals(table), name


@pytest.mark.parametrize("partition_by", [None, "candidate"])
def test_row_order_does_not_change_any_table(partition_by: str | None) -> None:
    expected = frames(ef.audit(plan_of(), LEDGER, partition_by=partition_by))  # type: ignore[arg-type]
    for seed in range(3):
        order = list(range(LEDGER.height))
        random.Random(seed).shuffle(order)
        shuffled = LEDGER[order]
        cases = CASES.sample(fraction=1.0, shuffle=True, seed=seed)
        with ef.audit(plan_of(cases), shuffled, partition_by=partition_by) as report:  # type: ignore[arg-type]
            got = frames(report)
        for name, table in expected.items():
            # units and attempts keep the ledger's lines (where each row came from): compared without them
            if name in ("units", "attempts"):
                assert got[name].drop("line").equals(table.drop("line")), (seed, name)
            else:
                assert got[name].equals(table), (seed, name)


def test_by_candidate_audit_of_tasks_closes_every_task_store() -> None:
    report = ef.audit(plan_of(), LEDGER, partition_by="candidate")
    assert isinstance(report.units, pl.LazyFrame)
    assert report.units.collect().height == 10
    tasks = report.by_task()
    report.close()
    assert report.closed and all(r.closed for r in tasks.values())


def test_spark_with_tasks_is_refused_before_anything_is_read() -> None:
    with pytest.raises(OptionError) as refused:
        ef.audit(plan_of(), LEDGER, engine="spark")
    assert refused.value.option == "engine"


def test_task_is_not_a_slice_when_tasks_are_keys() -> None:
    with pytest.raises(OptionError) as refused:
        ef.audit(plan_of(), LEDGER, slices=["task"])
    assert refused.value.option == "slices"


NEGO = "lm_eval/EleutherAI-lm-evaluation-harness-PR3936/outputs/qwen3-8b/negotiationtom"


def _first_run_counts(folder: Path) -> dict[tuple[str, str], tuple[int, int, int]]:
    """Per (task, model): planned documents, scored and passed rows of the task's first run, with plain json.

    A task's planned documents are the doc ids its samples files hold (--limit 20 ran the same 20 in every
    run); the first run (earliest timestamp) counts under retry policy "first"; a row is scored when its
    metric (the one of ``metrics`` whose value is a number) holds one, and passed when that number is 1.
    """
    results = sorted(folder.glob("results_*.json"))
    model = json.loads(results[0].read_text(encoding="utf-8"))["model_name"]
    per_task: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("samples_*.jsonl")):
        task, _ = path.stem.removeprefix("samples_").rsplit("_", 1)
        per_task.setdefault(task, []).append(path)
    counts = {}
    for task, paths in per_task.items():
        docs = {json.loads(line)["doc_id"] for p in paths for line in p.read_text(encoding="utf-8").splitlines()}
        first = [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines()]
        values = [next(r[m] for m in r["metrics"] if isinstance(r[m], (int, float))) for r in first]
        counts[(task, model)] = (len(docs), len(values), sum(1 for v in values if v == 1))
    return counts


@pytest.mark.skipif(not real(NEGO).is_dir(), reason="../shared/data/real is not laid beside the repository")
def test_negotiationtom_gives_one_row_per_task_and_candidate_with_counts_from_the_samples() -> None:
    folder = real(NEGO)
    expected = _first_run_counts(folder / "Qwen__Qwen3-8B")
    assert sorted(t for t, _ in expected) == [
        "negotiationtom_belief",
        "negotiationtom_desire",
        "negotiationtom_intention",
    ]
    read = ef.read("lm-eval", folder)
    report = ef.audit(ef.Plan.from_frame(read.plan), read.ledger)
    rows = report.summary.select("task", "candidate", "planned", "scored", "passed").rows()
    assert {(t, c): (p, s, n) for t, c, p, s, n in rows} == expected
    assert [(t, c) for t, c, *_ in rows] == sorted(expected)
    assert expected[("negotiationtom_belief", "Qwen/Qwen3-8B")] == (20, 20, 9)  # the sum of acc over the file


def test_a_case_without_a_task_refuses_the_plan() -> None:
    cases = CASES.with_columns(pl.when(pl.col("case_id") == "b2").then(None).otherwise(pl.col("task")).alias("task"))
    with pytest.raises(ef.PlanError) as refused:
        plan_of(cases)
    assert refused.value.problems.select("kind", "case_id").rows() == [("empty_identifier", "b2")]


def test_problems_beyond_the_rows_kept_are_sorted_by_task_first() -> None:
    from evalframe.problems import Problems, problems_frame, with_task

    def keys(lines: range) -> pl.DataFrame:
        return problems_frame([{"kind": "duplicate_key", "line": n} for n in lines])

    found = Problems.gather(
        [with_task(keys(range(1, 4)), "t10"), with_task(keys(range(4, 7)), "t9"), with_task(keys(range(7, 8)), None)],
        kept=2,
    )
    assert found.counts.rows() == [("duplicate_key", True, 7)]
    assert found.shown.select("task", "line").rows() == [(None, 7), ("t9", 4)]
    assert found.every().collect().select("task", "line").rows() == [
        (None, 7),
        ("t9", 4),
        ("t9", 5),
        ("t9", 6),
        ("t10", 1),
        ("t10", 2),
        ("t10", 3),
    ]
    assert found.of_kinds(["duplicate_key"]).height == 7
    found.close()


def test_slices_and_missingness_are_per_task() -> None:
    topics = {"b1": "x", "b2": "y", "b3": "y", "d1": "x", "d2": "y"}
    cases = CASES.with_columns(pl.col("case_id").replace_strict(topics).alias("topic"))
    report = ef.audit(plan_of(cases), LEDGER, slices=["topic"])
    assert report.slices.columns[:2] == ["task", "candidate"]
    assert report.missingness.columns[:2] == ["task", "candidate"]
    # belief A: b1 passed (x); b2 failed, b3 missing (y). desire B: d1 failed (x), d2 missing (y).
    rows = report.slices.select("task", "candidate", "slice_value", "planned", "missing").rows()
    assert rows == [
        ("belief", "A", "x", 1, 0),
        ("belief", "A", "y", 2, 1),
        ("belief", "B", "x", 1, 0),
        ("belief", "B", "y", 2, 0),
        ("desire", "A", "x", 1, 0),
        ("desire", "A", "y", 1, 0),
        ("desire", "B", "x", 1, 0),
        ("desire", "B", "y", 1, 1),
    ]
    assert report.missingness.select("task", "candidate").rows() == [
        ("belief", "A"),
        ("belief", "B"),
        ("desire", "A"),
        ("desire", "B"),
    ]


def test_one_task_with_a_ledger_task_column_is_the_audit_without_either() -> None:
    one = CASES.filter(pl.col("task") == "belief")
    ledger = LEDGER.filter(pl.col("case_id").str.starts_with("b"))
    labelled = ef.audit(plan_of(one), ledger.with_columns(pl.lit("belief").alias("task")))
    for name, table in frames(ef.audit(plan_of(one.drop("task")), ledger)).items():
        assert frames(labelled)[name].equals(table), name
    with pytest.raises(AuditRefused) as refused:
        ef.audit(plan_of(one), ledger.with_columns(pl.lit("desire").alias("task")))
    assert "task" not in refused.value.problems.columns  # one task: problems as without tasks
    assert set(refused.value.problems.filter(pl.col("refusing")).get_column("kind")) == {"unknown_task"}


@pytest.mark.skipif(not real(NEGO).is_dir(), reason="../shared/data/real is not laid beside the repository")
def test_the_command_prints_the_negotiationtom_folder_as_one_section_per_task_with_its_own_headline() -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    folder = real(NEGO)
    expected = _first_run_counts(folder / "Qwen__Qwen3-8B")
    result = CliRunner().invoke(main, ["audit", "--from", "lm-eval", str(folder), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2] == "3 tasks × 1 candidate: rates are per task; no number pools tasks"
    sections = [line.removeprefix("## task ").strip("`") for line in lines if line.startswith("## task ")]
    assert sections == ["negotiationtom_belief", "negotiationtom_desire", "negotiationtom_intention"]
    headlines = [line for line in lines if line.startswith("- Qwen/Qwen3-8B: pass_rate_scored ")]
    assert [h.split(" = ")[1].split(";")[0] for h in headlines] == [
        f"{expected[(task, 'Qwen/Qwen3-8B')][2]} passed / {expected[(task, 'Qwen/Qwen3-8B')][1]} scored"
        for task in sections
    ]
    assert "pooled_metrics" not in result.output  # acc and exact_match are graded in different tasks


@pytest.mark.skipif(not real(NEGO).is_dir(), reason="../shared/data/real is not laid beside the repository")
def test_micro_refuses_the_negotiationtom_tasks_graded_by_acc_and_by_exact_match() -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    result = CliRunner().invoke(main, ["audit", "--from", "lm-eval", str(real(NEGO)), "--aggregate", "micro"])
    assert result.exit_code == 2
    # Each task's report records its own files' metric, not every task's: belief and desire acc, intention exact_match.
    assert "negotiationtom_desire: grade=binary, pass_threshold=None, score_range=[0.0, 1.0], metrics=['acc']" in (
        result.output
    )
    intention = "negotiationtom_intention: grade=binary, pass_threshold=None, score_range=[0.0, 1.0]"
    assert f"{intention}, metrics=['exact_match']" in result.output


def test_compare_of_several_tasks_names_a_candidate_of_no_task_as_a_usage_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    (tmp_path / "plan.csv").write_text("case_id,task\na1,alpha\na2,alpha\nb1,beta\n", encoding="utf-8")
    rows = "".join(f"{c},{k},1\n" for c in ("m1", "m2") for k in ("a1", "a2", "b1"))
    (tmp_path / "results.csv").write_text("candidate,case_id,passed\n" + rows, encoding="utf-8")
    args = ["compare", "--plan", str(tmp_path / "plan.csv"), "--results", str(tmp_path / "results.csv")]
    result = CliRunner().invoke(main, [*args, "--candidates", "m1,m2", "--baseline", "m9", "--candidate", "m2"])
    assert result.exit_code == 2
    assert "baseline 'm9' is not a candidate of the report (candidates: m1, m2)" in result.output


def test_an_audits_aggregate_names_the_candidates_it_leaves_out_and_refuses_when_that_is_all(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalframe.cli import main

    units = "candidate,case_id,trial,task\nm1,a1,1,alpha\nm1,a2,1,alpha\nm1,b1,1,beta\nm2,a1,1,alpha\nm2,a2,1,alpha\n"
    (tmp_path / "units.csv").write_text(units, encoding="utf-8")
    (tmp_path / "r.csv").write_text("candidate,case_id,passed\nm1,a1,1\nm1,a2,0\nm1,b1,1\nm2,a1,1\nm2,a2,1\n", "utf-8")
    args = ["audit", "--plan", str(tmp_path / "units.csv"), "--results", str(tmp_path / "r.csv")]
    args += ["--aggregate", "macro"]
    result = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert result.exit_code == 0, result.output
    table = result.output.split("## declared aggregate (macro of pass_rate_scored across tasks)")[1]
    # m1: (1/2 + 1/1) / 2; the counts beside it are summed over the tasks and say so (2/3 is not the estimate)
    assert "| candidate | estimate \\[95% CI\\] | se | weights | passed/scored summed over tasks |" in table
    assert "| m1 | 0.75 \\[null, null\\] | null | alpha 0.5, beta 0.5 | 2/3 |" in table
    assert table.strip().endswith("not aggregated (not audited in every task): m2 (lacks beta)")
    (tmp_path / "units.csv").write_text("candidate,case_id,trial,task\nm1,a1,1,alpha\nm2,b1,1,beta\n", "utf-8")
    (tmp_path / "r.csv").write_text("candidate,case_id,passed\nm1,a1,1\nm2,b1,1\n", "utf-8")
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert "no candidate was audited in every task (m1 lacks beta; m2 lacks alpha): nothing to aggregate" in said


def test_a_ledger_task_column_is_no_problem_of_its_own_beside_a_refused_plan_with_tasks(tmp_path: Path) -> None:
    from evalframe.audit import with_ledger_problems

    with pytest.raises(ef.PlanError) as refused:
        ef.Plan.from_frame(pl.DataFrame({"case_id": ["a1", "a2"], "task": ["alpha", " alpha"]}), candidates=["m1"])
    ledger = pl.DataFrame(
        {"task": ["alpha", "alpha"], "candidate": ["m1", "m1"], "case_id": ["a1", "zz"], "passed": [1, 1]}
    )
    found = with_ledger_problems(refused.value, ledger).problems
    assert sorted(found.get_column("kind").to_list()) == ["padded_identifier", "unknown_case"]


def test_a_ledger_task_column_beside_a_plan_without_tasks_says_the_plan_has_none() -> None:
    plan = ef.Plan.from_frame(pl.DataFrame({"case_id": ["a1"]}), candidates=["m1"])
    with pytest.raises(ef.AuditRefused) as refused:
        ef.audit(plan, pl.DataFrame({"task": ["alpha"], "candidate": ["m1"], "case_id": ["a1"], "passed": [1]}))
    assert refused.value.problems.select("kind", "detail").rows() == [
        (
            "unexpected_column",
            "column 'task' names tasks, but the plan has no task column (SPEC §1): give the plan one, or leave it "
            "out of the ledger",
        )
    ]


def test_the_same_case_id_in_two_tasks_audits_as_two_units(tmp_path: Path) -> None:
    # q1 and q2 are planned in both tasks (four units per candidate); the results name each row's task.
    (tmp_path / "plan.csv").write_text("case_id,task\nq1,belief\nq2,belief\nq1,desire\nq2,desire\n")
    (tmp_path / "results.csv").write_text(
        "candidate,case_id,task,passed\n"
        "A,q1,belief,1\nA,q2,belief,0\nA,q1,desire,0\n"  # A: desire q2 has no row
        "B,q1,belief,1\nB,q2,belief,1\nB,q1,desire,1\nB,q2,desire,0\n"
    )
    plan = ef.Plan.from_file(tmp_path / "plan.csv", candidates=["A", "B"])
    assert plan.n_units == 8
    report = ef.audit(plan, tmp_path / "results.csv")
    assert report.summary.select("task", "candidate", "planned", "scored", "passed", "missing").rows() == [
        ("belief", "A", 2, 2, 1, 0),
        ("belief", "B", 2, 2, 2, 0),
        ("desire", "A", 2, 1, 0, 1),
        ("desire", "B", 2, 2, 1, 0),
    ]
    assert report.units.filter(pl.col("candidate") == "A").select("task", "case_id", "outcome").rows() == [
        ("belief", "q1", "passed"),
        ("belief", "q2", "failed"),
        ("desire", "q1", "failed"),
        ("desire", "q2", "missing"),
    ]


def test_a_case_id_twice_in_one_task_is_a_duplicate_case_and_across_tasks_is_not(tmp_path: Path) -> None:
    (tmp_path / "plan.csv").write_text("case_id,task\nq1,belief\nq1,desire\nq1,belief\n")
    with pytest.raises(ef.PlanError) as caught:
        ef.Plan.from_file(tmp_path / "plan.csv", candidates=["A"])
    # lines 2 and 4 (the two q1 of belief); line 3 (q1 of desire) is another case
    assert caught.value.problems.select("kind", "line", "detail").rows() == [
        ("duplicate_case", 2, "case_id appears more than once in its task"),
        ("duplicate_case", 4, "case_id appears more than once in its task"),
    ]


def test_a_row_naming_a_case_of_another_task_says_where_that_case_is_planned() -> None:
    cases = pl.DataFrame({"case_id": ["b1", "d1"], "task": ["belief", "desire"]})
    ledger = pl.DataFrame(
        {"candidate": ["A", "A"], "case_id": ["b1", "b1"], "task": ["belief", "desire"], "passed": [1, 1]}
    )
    with pytest.raises(AuditRefused) as caught:
        ef.audit(ef.Plan.from_frame(cases, candidates=["A"]), ledger)
    found = caught.value.problems.filter(pl.col("kind") == "unknown_case")
    assert found.select("task", "case_id", "detail").rows() == [
        ("desire", "b1", "case b1 is not in task desire: it is planned in task belief"),
    ]


def test_a_row_without_a_task_whose_case_id_two_tasks_share_is_an_unknown_task() -> None:
    cases = pl.DataFrame({"case_id": ["q1", "q1", "q2"], "task": ["desire", "belief", "belief"]})
    ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["q2", "q1"], "passed": [1, 0]})
    with pytest.raises(AuditRefused) as caught:
        ef.audit(ef.Plan.from_frame(cases, candidates=["A"]), ledger)
    refusing = caught.value.problems.filter(pl.col("refusing"))
    assert refusing.select("kind", "case_id", "line", "detail").rows() == [
        (
            "unknown_task",
            "q1",
            2,
            "the row of (A, q1) has no task, and case q1 is planned in tasks belief, desire: "
            "the results must name the task of each row (a task column)",
        ),
    ]


def test_a_refused_plan_whose_tasks_share_a_case_id_still_checks_the_ledger_once_per_row(tmp_path: Path) -> None:
    # q1 is in both tasks (no problem) and twice in belief (a duplicate_case); the ledger's zz is unknown, once.
    (tmp_path / "plan.csv").write_text("case_id,task\nq1,belief\nq1,desire\nq1,belief\n")
    (tmp_path / "results.csv").write_text("candidate,case_id,task,passed\nA,q1,belief,1\nA,zz,desire,1\n")
    from evalframe.audit import with_ledger_problems

    with pytest.raises(ef.PlanError) as refused:
        ef.Plan.from_file(tmp_path / "plan.csv", candidates=["A"])
    found = with_ledger_problems(refused.value, tmp_path / "results.csv").problems
    assert found.select("kind", "source", "line").rows() == [
        ("duplicate_case", str(tmp_path / "plan.csv"), 2),
        ("duplicate_case", str(tmp_path / "plan.csv"), 4),
        ("unknown_case", str(tmp_path / "results.csv"), 3),
    ]


def test_every_table_a_clean_audit_of_tasks_writes_has_the_task_column_even_when_empty(tmp_path: Path) -> None:
    cases = pl.DataFrame({"case_id": ["b1", "d1"], "task": ["belief", "desire"], "topic": ["x", "y"]})
    ledger = pl.DataFrame({"candidate": ["A", "A"], "case_id": ["b1", "d1"], "passed": [1, 0]})
    report = ef.audit(ef.Plan.from_frame(cases, candidates=["A"]), ledger, slices=["topic"])
    report.write(tmp_path / "out")
    written = {p.stem: pl.read_parquet(p) for p in sorted((tmp_path / "out").glob("*.parquet"))}
    assert sorted(written) == ["attempts", "missingness", "problems", "slices", "summary", "units"]
    assert written["problems"].height == 0  # every planned unit has its one passing or failing row
    for name, table in written.items():
        assert table.columns[0] == "task", name
        assert table.schema["task"] == pl.String, name
    assert written["summary"].get_column("task").to_list() == ["belief", "desire"]


def test_a_note_of_no_task_is_shown_once_before_the_tasks_and_in_no_task_section() -> None:
    from evalframe.load import Loaded
    from evalframe.problems import problems_frame

    # One note of the input itself (no task), one own note per task (A misses b3, B misses d2: missing_unit).
    note = problems_frame([{"kind": "limited_run", "source": "results", "detail": "ran 5 of 50", "refusing": False}])
    rows = LEDGER.with_columns(pl.int_range(1, LEDGER.height + 1).alias("line"), pl.lit("results").alias("source"))
    report = ef.audit(plan_of(), Loaded(rows.lazy(), problems=note, source="results"))
    doc = report.to_dict()
    assert [(n["kind"], n["count"]) for n in doc["notes"]] == [("limited_run", 1)]
    assert {t: [(n["kind"], n["count"]) for n in one["notes"]] for t, one in doc["tasks"].items()} == {
        "belief": [("missing_unit", 1)],
        "desire": [("missing_unit", 1)],
    }
    assert {t: one["problems_by_kind"] for t, one in doc["tasks"].items()} == {
        "belief": {"missing_unit": 1},
        "desire": {"missing_unit": 1},
    }
    markdown = report.to_markdown()
    assert markdown.count("limited_run") == 1
    assert markdown.index("## Notes of no task (not refusing)") < markdown.index("## task `belief`")
    # the task's own report (by_task) still holds the input's note: it is the report that task alone gives
    assert report.by_task()["belief"].problems.get_column("kind").to_list() == ["limited_run", "missing_unit"]


def test_the_overview_of_several_tasks_is_one_row_per_task_and_candidate_at_the_top_of_every_output() -> None:
    report = ef.audit(plan_of(), LEDGER)
    doc = report.to_dict()
    assert list(doc)[0] == "overview"
    # by hand from LEDGER (see the first test): rate passed/scored; range [passed/planned, (passed+missing)/planned]
    assert [
        (r["task"], r["candidate"], r["planned"], r["scored"], r["pass_rate_scored"], r["pass_rate_planned"],
         r["pass_rate_upper"])
        for r in doc["overview"]
    ] == [
        ("belief", "A", 3, 2, 1 / 2, 1 / 3, 2 / 3),
        ("belief", "B", 3, 3, 1.0, 1.0, 1.0),
        ("desire", "A", 2, 2, 1.0, 1.0, 1.0),
        ("desire", "B", 2, 1, 0.0, 0.0, 1 / 2),
    ]  # fmt: skip
    # a projection of the summary, no number of its own: its intervals are the summary's
    bounds = ["pass_rate_scored_ci_low", "pass_rate_scored_ci_high"]
    assert [tuple(r[c] for c in bounds) for r in doc["overview"]] == report.summary.select(bounds).rows()
    markdown = report.to_markdown()
    assert markdown.index("## Overview (one row per task and candidate)") < markdown.index("## task `belief`")
    assert "| belief | A | 3 | 2 | 0.5 \\[" in markdown
    assert "| desire | B | 2 | 1 | 0.0 \\[" in markdown and "| \\[0.0, 0.5\\] |" in markdown


def _notes_by_task(folder: Path) -> dict[str, dict[str, int]]:
    """Per task: limited_run (a results file whose n-samples effective < original) and header_rows_disagree (a
    results file naming the task with no samples file of its timestamp), counted with plain json."""
    counts: dict[str, dict[str, int]] = {}
    for path in sorted(folder.glob("results_*.json")):
        stamp = path.stem.removeprefix("results_")
        for task, n in json.loads(path.read_text(encoding="utf-8"))["n-samples"].items():
            mine = counts.setdefault(task, {})
            if n["effective"] < n["original"]:
                mine["limited_run"] = mine.get("limited_run", 0) + 1
            if not (folder / f"samples_{task}_{stamp}.jsonl").exists():
                mine["header_rows_disagree"] = mine.get("header_rows_disagree", 0) + 1
    return counts


@pytest.mark.skipif(not real(NEGO).is_dir(), reason="../shared/data/real is not laid beside the repository")
def test_an_importers_notes_about_one_task_carry_it_in_the_problems_the_json_and_the_tasks_section(
    tmp_path: Path,
) -> None:
    from evalframe.load import Loaded

    folder = real(NEGO)
    expected = _notes_by_task(folder / "Qwen__Qwen3-8B")
    assert expected["negotiationtom_belief"] == {"limited_run": 3, "header_rows_disagree": 1}
    assert expected["negotiationtom_intention"] == {"limited_run": 3}
    read = ef.read("lm-eval", folder)
    assert read.notes.columns[0] == "task"
    report = ef.audit(ef.Plan.from_frame(read.plan), Loaded(read.ledger.lazy(), read.notes, str(folder)))
    report.write(tmp_path / "out")
    written = pl.read_parquet(tmp_path / "out" / "problems.parquet")
    kinds = ["limited_run", "header_rows_disagree"]
    found = written.filter(pl.col("kind").is_in(kinds)).group_by("task", "kind").len().rows()
    assert {(t, k): n for t, k, n in found} == {(t, k): n for t, c in expected.items() for k, n in c.items()}
    doc = report.to_dict()
    assert not [n for n in doc.get("notes", []) if n["kind"] in kinds]  # none is a note of no task
    for task, counts in expected.items():
        assert {n["kind"]: n["count"] for n in doc["tasks"][task]["notes"] if n["kind"] in kinds} == counts
        own = report.by_task()[task].problems  # a task's own report: its notes, without a task column
        assert "task" not in own.columns
        assert dict(own.filter(pl.col("kind").is_in(kinds)).group_by("kind").len().iter_rows()) == counts
    markdown = report.to_markdown()
    start, end = markdown.index("## task `negotiationtom_belief`"), markdown.index("## task `negotiationtom_desire`")
    belief = markdown[start:end]
    assert "limited_run" in belief and "header_rows_disagree" in belief


def test_notes_of_one_task_and_of_none_concatenate_into_one_table_with_a_task_column() -> None:
    from evalframe.problems import concat_problems, problems_frame

    tasked = problems_frame([{"kind": "limited_run", "task": "belief", "refusing": False}])
    plain = problems_frame([{"kind": "no_export", "source": "logs/"}])
    both = concat_problems([plain, tasked])
    assert both.columns[0] == "task"
    assert both.select("task", "kind").rows() == [(None, "no_export"), ("belief", "limited_run")]  # no task first


def test_a_units_table_with_the_same_case_id_in_two_tasks_plans_two_cases(tmp_path: Path) -> None:
    # Units: A plans q1 in belief and in desire, and q2 in belief; B plans q1 in desire only.
    (tmp_path / "units.csv").write_text(
        "candidate,case_id,task,trial\nA,q1,belief,1\nA,q1,desire,1\nA,q2,belief,1\nB,q1,desire,1\n"
    )
    (tmp_path / "results.csv").write_text(
        "candidate,case_id,task,passed\nA,q1,belief,1\nA,q1,desire,0\nA,q2,belief,1\nB,q1,desire,1\n"
    )
    plan = ef.Plan.from_file(tmp_path / "units.csv")
    assert plan.cases.select("case_id", "task").rows() == [("q1", "belief"), ("q1", "desire"), ("q2", "belief")]
    assert plan.n_units == 4
    assert plan.for_task("belief").units.rows() == [("A", "q1", 1), ("A", "q2", 1)]
    assert plan.for_task("belief").candidates == ("A",)
    assert plan.for_task("desire").units.rows() == [("A", "q1", 1), ("B", "q1", 1)]
    report = ef.audit(plan, tmp_path / "results.csv")
    assert report.summary.select("task", "candidate", "planned", "scored", "passed").rows() == [
        ("belief", "A", 2, 2, 2),
        ("desire", "A", 1, 1, 0),
        ("desire", "B", 1, 1, 1),
    ]


def test_a_units_table_listing_one_task_case_twice_is_still_a_duplicate_case_with_its_own_case_id(
    tmp_path: Path,
) -> None:
    (tmp_path / "units.csv").write_text("candidate,case_id,task,trial\nA,q1,belief,1\nA,q1,belief,1\nA,q1,desire,1\n")
    with pytest.raises(ef.PlanError) as refused:
        ef.Plan.from_file(tmp_path / "units.csv")
    rows = refused.value.problems.select("kind", "line", "case_id").rows()
    assert rows == [("duplicate_case", 2, "q1"), ("duplicate_case", 3, "q1")]  # lines 2 and 3: belief's q1 twice

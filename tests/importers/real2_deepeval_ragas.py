"""Real DeepEval / ragas exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case, funnel

_BEEAI = "deepeval_ragas/RoyiAizenstain-beeai-framework/.deepeval/.temp_test_run_data.json"
_SABA = "deepeval_ragas/SabaTech-dev-QA-FRAMEWORK/.deepeval/.temp_test_run_data.json"
_GLACIER = (
    "deepeval_ragas/glacier-creative-git-knowledge-graph-traversal-semantic-rag-research/.deepeval/"
    ".temp_test_run_data.json"
)
_TIAGO = "deepeval_ragas/tiagorcfortunato-rag-pdf-chatbot/ragas_results.csv"
_FILIP = "deepeval_ragas/filipxcode-FinanceDocsAssistant/ragas_results.csv"
_ANNA = "deepeval_ragas/userANNA123-rag-openagenda/ragas_results.csv"
_NIKOLA = "deepeval_ragas/nikola-zitko-ragas-rag-eval/ragas_results.csv"
_RUN = "temp_test_run_data"
NUMERIC = ("--grade", "numeric")


def _funnel(planned: int, scored: int, passed: int | None) -> dict[str, int | None]:
    """Every planned unit ran; those not scored are grader failures."""
    return funnel(planned, passed, scored=scored, judge_failed=planned - scored, not_scored=0)


def _metric(name: str, *args: str) -> tuple[str, ...]:
    return ("--score", name, *NUMERIC, *args)


CASES: list[Case] = [
    # beeai: 1 test case x 9 metrics. Exact Match 0.0 and AnswerLLMJudgeMetric 0.0 failed; Tool Correctness
    # 0.5 (threshold 0.5, success), ToolUsageMetric 1.0, FactsSimilarityMetric 0.8 passed; Answer Relevancy,
    # Contextual Recall, Faithfulness and Argument Correctness timed out (score null, error).
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, 0)},
        notes=frozenset({"plan_from_rows"}),
        why="success (all metrics must pass): two metrics ran and failed, so the case fails (score 0) although "
        "4 judges timed out: a failed metric is a verdict, the timeouts cannot turn it into a pass",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 0, None)},
        args=_metric("Answer Relevancy"),
        notes=frozenset({"grader_error"}),
        why="a timed-out metric (score null, error) is a grader failure: judge_failed 1, never a 0",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 0, None)},
        args=_metric("Argument Correctness"),
        notes=frozenset({"grader_error"}),
        why="the fourth timed-out metric: judge_failed as well",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, None)},
        args=_metric("Tool Correctness"),
        why="Tool Correctness 0.5 (DeepEval success at its threshold 0.5): under --grade numeric without "
        "--pass-threshold the number is not a pass or a fail (passed null)",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, 1)},
        args=_metric("Tool Correctness", "--pass-threshold", "0.5"),
        why="0.5 reaches the declared threshold 0.5",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, 0)},
        args=_metric("Tool Correctness", "--pass-threshold", "0.6"),
        why="0.5 is below the declared 0.6: the declared threshold decides, not DeepEval's own success",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, 0)},
        args=("--score", "Exact Match"),
        why="Exact Match 0.0 with success false reads as a binary grade: a fail",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        1,
        args=("--score", "FactsSimilarityMetric"),
        refusal_kinds=frozenset({"invalid_grade"}),
        why="FactsSimilarityMetric 0.8 is not a binary grade: --grade binary refuses (read it with --grade numeric)",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        0,
        {_RUN: _funnel(1, 1, 1)},
        args=_metric("FactsSimilarityMetric", "--pass-threshold", "0.8"),
        why="0.8 at the declared threshold 0.8: a pass",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_BEEAI,),
        1,
        args=("--score", "Answer relevancy"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="metric names are exact: refuse, naming where it looked (metricsData names) and the 9 found",
        collection="real2",
    ),
    # SabaTech: 3 test cases named test_deepeval_geval_runs_against_golden_cases (order 1, 2, 0), one GEval
    # metric each with neither a score nor an error (success false, cost 0: the judge never ran).
    Case(
        "deepeval",
        (_SABA,),
        0,
        {_RUN: _funnel(3, 0, 0)},
        notes=frozenset({"grader_error", "plan_from_rows"}),
        why="three test cases with one name are three cases (<name>/<order>), never merged into one; a GEval "
        "metric with no score and no error gave no judgment: 3 grader failures, not 3 failed tests (DeepEval's "
        "own success false is not read)",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_SABA,),
        0,
        {_RUN: _funnel(3, 0, None)},
        args=_metric("GEval [GEval]"),
        notes=frozenset({"grader_error"}),
        why="the GEval metric itself: no score on any of the 3 cases",
        collection="real2",
    ),
    Case(
        "deepeval",
        (_GLACIER,),
        1,
        refusal_kinds=frozenset({"empty_plan"}),
        why="testCases: [] - nothing ran: refused as empty_plan naming the file, never an empty valid audit",
        collection="real2",
    ),
    # ragas CSVs: numbers recounted with the csv module (an empty cell is a metric ragas left NaN).
    Case(
        "ragas",
        (_TIAGO,),
        0,
        {"ragas_results": _funnel(10, 1, None)},
        args=_metric("faithfulness"),
        notes=frozenset({"nonfinite_score", "plan_from_rows"}),
        why="faithfulness filled on 1 row of 10 (0.3077): 9 grader failures, coverage 0.1, passed null",
        collection="real2",
    ),
    Case(
        "ragas",
        (_TIAGO,),
        0,
        {"ragas_results": _funnel(10, 1, 0)},
        args=_metric("faithfulness", "--pass-threshold", "0.5"),
        why="the one faithfulness score 0.3077 is below 0.5",
        collection="real2",
    ),
    Case(
        "ragas",
        (_TIAGO,),
        0,
        {"ragas_results": _funnel(10, 3, 1)},
        args=_metric("answer_relevancy", "--pass-threshold", "0.9"),
        why="answer_relevancy 0.7701, 0.8126, 0.9482 on 3 rows: 1 reaches 0.9",
        collection="real2",
    ),
    Case(
        "ragas",
        (_TIAGO,),
        0,
        {"ragas_results": _funnel(10, 0, None)},
        args=_metric("context_precision"),
        why="context_precision empty on all 10 rows: 10 grader failures, 0 scored",
        collection="real2",
    ),
    Case(
        "ragas",
        (_TIAGO,),
        0,
        {"ragas_results": _funnel(10, 4, 2)},
        args=_metric("context_recall", "--pass-threshold", "0.5"),
        why="context_recall 0.4, 0.2, 1.0, 1.0 on 4 rows: 2 reach 0.5",
        collection="real2",
    ),
    Case(
        "ragas",
        (_TIAGO,),
        1,
        refusal_kinds=frozenset({"ambiguous_score"}),
        why="4 metric columns and no --score: refuse, naming them",
        collection="real2",
    ),
    Case(
        "ragas",
        (_FILIP,),
        0,
        {"ragas_results": _funnel(4, 1, None)},
        args=_metric("faithfulness"),
        notes=frozenset({"nonfinite_score", "plan_from_rows"}),
        why="the first column has an empty header (the pandas index 0-3): it is no metric and no id; the cases "
        "are the 4 user_input questions; faithfulness filled on 1 (1.0)",
        collection="real2",
    ),
    Case(
        "ragas",
        (_FILIP,),
        0,
        {"ragas_results": _funnel(4, 4, 3)},
        args=_metric("context_precision", "--pass-threshold", "0.9"),
        why="context_precision 0.99999999997, 0.99999999998, 0.9999999999, 0.0: 3 reach 0.9",
        collection="real2",
    ),
    Case(
        "ragas",
        (_FILIP,),
        1,
        refusal_kinds=frozenset({"ambiguous_score"}),
        why="4 metric columns (the empty-header index column is not one) and no --score",
        collection="real2",
    ),
    Case(
        "ragas",
        (_ANNA,),
        0,
        {"ragas_results": _funnel(5, 0, None)},
        args=_metric("answer_relevancy"),
        notes=frozenset({"nonfinite_score"}),
        why="answer_relevancy empty on all 5 rows: an all-empty metric is 5 grader failures, not 5 missing rows",
        collection="real2",
    ),
    Case(
        "ragas",
        (_ANNA,),
        0,
        {"ragas_results": _funnel(5, 5, 4)},
        args=_metric("faithfulness", "--pass-threshold", "0.5"),
        why="faithfulness 0.8, 1.0, 0.9412, 0.6111, 0.0213: 4 reach 0.5",
        collection="real2",
    ),
    Case(
        "ragas",
        (_NIKOLA,),
        1,
        refusal_kinds=frozenset({"empty_plan"}),
        why="an aggregate table (metric,score: 4 metrics, one score each), no row per question: its scores have "
        "no per-sample evidence, so the import refuses as empty_plan (as a report alone or a record without "
        "sample ids does), naming the table",
        collection="real2",
    ),
]

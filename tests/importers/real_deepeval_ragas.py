"""Real DeepEval test runs and ragas / DeepEval CSVs and their exact outcomes (numbers from SOURCES.md)."""

from tests.importers.real_table import Case, funnel

_RUN = "deepeval_ragas/ciire-RAG_Project/.deepeval/.temp_test_run_data.json"
_RAGAS_10 = "deepeval_ragas/ciire-RAG_Project/eval_results_2026.csv"
_RAGAS_2 = "deepeval_ragas/ciire-RAG_Project/evaluation_results.csv"
_DEEPEVAL_CSV = "deepeval_ragas/ciire-RAG_Project/deepeval_results.csv"
_BOOKS = "deepeval_ragas/JessicaGarson-Using-Ragas-with-Elasticsearch/ragas_evaluation.csv"
NUMERIC = ("--grade", "numeric")


def _funnel(planned: int, scored: int, **more: int | None) -> dict[str, int | None]:
    """Every planned unit ran; those not scored are grader failures (``passed`` only where given)."""
    counts = funnel(planned, None, scored=scored, judge_failed=planned - scored)
    del counts["passed"]
    return counts | more


CASES: list[Case] = [
    Case(
        "deepeval",
        (_RUN,),
        0,
        {"temp_test_run_data": _funnel(2, 1, passed=1)},
        notes=frozenset({"grader_error", "plan_from_rows"}),
        why="test_case_0: 4 metrics 1.0, success; test_case_1: every metric timed out (score null, error): "
        "the case is a grader failure, not a failed test",
    ),
    Case(
        "deepeval",
        (_RUN,),
        0,
        {"temp_test_run_data": _funnel(2, 1, passed=None)},
        args=("--score", "Faithfulness", *NUMERIC),
        notes=frozenset({"grader_error"}),
        why="per metric 1 scored / 2 planned: Faithfulness 1.0 and a judge error; a numeric score without "
        "--pass-threshold passes nothing (passed null), whatever DeepEval's own metric success says",
    ),
    Case(
        "deepeval",
        (_RUN,),
        0,
        {"temp_test_run_data": _funnel(2, 1, passed=1)},
        args=("--score", "Faithfulness", *NUMERIC, "--pass-threshold", "0.9"),
        why="with a declared threshold the Faithfulness score 1.0 passes (>= 0.9): the threshold decides",
    ),
    Case(
        "deepeval",
        (_RUN,),
        0,
        {"temp_test_run_data": _funnel(2, 1, passed=None)},
        args=("--score", "Contextual Recall", *NUMERIC),
        why="the fourth metric: the same 1 scored / 2 planned, passed null without a threshold",
    ),
    Case(
        "deepeval",
        (_RUN,),
        1,
        args=("--score", "faithfulness"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="metric names are exact (DeepEval writes Faithfulness): refuse, naming the metrics the run has",
    ),
    Case(
        "deepeval",
        (_DEEPEVAL_CSV,),
        0,
        {"deepeval_results": _funnel(4, 4)},
        args=("--score", "score_relevancy", *NUMERIC),
        why="a user-written DeepEval summary CSV: 4 questions x 3 scores, all filled; the question is the case id",
    ),
    Case(
        "deepeval",
        (_DEEPEVAL_CSV,),
        1,
        refusal_kinds=frozenset({"ambiguous_score"}),
        why="3 score columns and none declared: refuse, naming them",
    ),
    Case(
        "ragas",
        (_RAGAS_10,),
        0,
        {"eval_results_2026": _funnel(10, 1)},
        args=("--score", "faithfulness", *NUMERIC),
        notes=frozenset({"nonfinite_score", "plan_from_rows"}),
        why="faithfulness filled on 1 row of 10 (0.583): ragas' NaN-skipping mean rests on 1 unit; coverage 0.1",
    ),
    Case(
        "ragas",
        (_RAGAS_10,),
        0,
        {"eval_results_2026": _funnel(10, 0)},
        args=("--score", "answer_relevancy", *NUMERIC),
        why="answer_relevancy empty on all 10 rows: 10 grader failures, 0 scored (coverage 0), not 10 missing rows",
    ),
    Case(
        "ragas",
        (_RAGAS_10,),
        0,
        {"eval_results_2026": _funnel(10, 0)},
        args=("--score", "context_precision", *NUMERIC),
        why="context_precision empty on all 10 rows: coverage 0",
    ),
    Case(
        "ragas",
        (_RAGAS_10,),
        1,
        refusal_kinds=frozenset({"ambiguous_score"}),
        why="three metric columns and no --score: refuse, naming them",
    ),
    Case(
        "ragas",
        (_RAGAS_2,),
        0,
        {"evaluation_results": _funnel(2, 2)},
        args=("--score", "faithfulness", *NUMERIC),
        why="faithfulness 2/2 filled (1.0 and 0.0)",
    ),
    Case(
        "ragas",
        (_RAGAS_2,),
        0,
        {"evaluation_results": _funnel(2, 0)},
        args=("--score", "answer_relevancy", *NUMERIC),
        why="answer_relevancy: 0 scored of 2",
    ),
    Case(
        "ragas",
        (_RAGAS_2,),
        0,
        {"evaluation_results": _funnel(2, 2)},
        args=("--score", "context_precision", *NUMERIC),
        why="context_precision 2/2 filled (0.49999999995 and 0.0)",
    ),
    Case(
        "ragas",
        (_BOOKS,),
        0,
        {"ragas_evaluation": _funnel(4, 4, passed=1)},
        args=("--score", "context_precision", *NUMERIC, "--pass-threshold", "0.5"),
        why="4 units, context_precision 0.0, 0.49999999995, 0.0, 0.99999999995: at threshold 0.5 one passes",
    ),
    Case(
        "ragas",
        (_BOOKS,),
        0,
        {"ragas_evaluation": _funnel(4, 4, passed=2)},
        args=("--score", "context_recall"),
        why="context_recall is 0, 1, 0, 1: a 0/1 metric reads under the default --grade binary, 2 pass",
    ),
    Case(
        "ragas",
        (_BOOKS,),
        0,
        {"ragas_evaluation": _funnel(4, 4)},
        args=("--score", "faithfulness", *NUMERIC),
        why="faithfulness 1.0, 1.0, 0.667, 0.667: 4 scored; no case id column, the question text is the identity",
    ),
]

"""Real openai_evals exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case

_AUTO_GPT = (
    "openai_evals/Significant-Gravitas-Auto-GPT-Benchmarks/README.md.extract/"
    "230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl"
)

CASES: list[Case] = [
    Case(
        "openai-evals",
        (_AUTO_GPT,),
        0,
        {
            "auto_gpt_completion_fn": {
                "planned": 3,
                "attempted": 3,
                "completed": 3,
                "scored": 3,
                "passed": 1,
                "missing": 0,
                "exec_failed": 0,
                "judge_failed": 0,
                "not_scored": 0,
            }
        },
        notes=frozenset({"plan_from_rows"}),
        why="the 8 README lines: spec, final_report (accuracy 0.333, never evidence) and 3 x (sampling + match); "
        "match correct false, true, false: 1 of 3, which agrees with the final_report (no header_rows_disagree). "
        "The log declares no dataset size: the plan is the 3 samples seen",
        collection="real2",
    ),
    Case(
        "openai-evals",
        (_AUTO_GPT,),
        1,
        args=("--score", "accuracy"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="accuracy is a final_report number, not a key of any match event: refused naming the event keys",
        collection="real2",
    ),
]

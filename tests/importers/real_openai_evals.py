"""Real openai_evals exports and their exact outcomes (numbers from SOURCES.md)."""

from tests.importers.real_table import Case

SRL = "openai_evals/openai-evals-PR1471/tests/unit/evals/biomed2402/SRL/log/gpt-4-cot_semantic_role_recognition.jsonl"
ORIPROMPT = "openai_evals/openai-evals/evals/registry/data/self_prompting/oriprompt.log"

CASES: list[Case] = [
    Case(
        "openai-evals",
        (SRL,),
        0,
        {
            "zhishu/gpt-4-cot": {
                "planned": 9,
                "attempted": 9,
                "completed": 9,
                "scored": 0,
                "passed": 0,
                "missing": 0,
                "exec_failed": 0,
                "judge_failed": 1,
                "not_scored": 8,
            }
        },
        notes=frozenset({"run_status", "plan_from_rows"}),
        why="9 samples sampled (32 sampling events grouped by sample_id), 1 graded with score null "
        "(judge error); no final_report: the run did not finish",
    ),
    Case(
        "openai-evals",
        (SRL,),
        1,
        args=("--score", "scor"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="a mistyped --score refuses naming the grade keys present (choice, score)",
    ),
    Case(
        "openai-evals",
        (ORIPROMPT,),
        1,
        refusal_kinds=frozenset({"empty_plan"}),
        why="spec + final_report, zero events: no per-sample evidence, so nothing is audited whatever "
        "final_report claims (n_samples 1500 is never a denominator)",
    ),
    Case(
        "openai-evals",
        (ORIPROMPT,),
        1,
        args=("--min-coverage", "0.5"),
        refusal_kinds=frozenset({"empty_plan"}),
        why="a release gate never passes on a log with no evidence",
    ),
]

"""Real evalscope exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case, funnel

_VIZ = "evalscope/modelscope-evalscope/examples/viz"
_7B = f"{_VIZ}/qwen2.5-7b-instruct"
_14B = f"{_VIZ}/qwen2.5-14b-instruct"
_OLD = f"{_VIZ}/20250117_154119"


def _review(model: str, stem: str) -> str:
    return f"{_VIZ}/{model}/reviews/{model}/{stem}.jsonl"


CASES: list[Case] = [
    Case(
        "evalscope",
        (_7B, _14B),
        0,
        {
            (task, model): funnel(10, passed, not_scored=0)
            for task, by_model in {
                "gpqa_diamond": (6, 6),
                "gsm8k": (9, 9),
                "humaneval": (10, 10),
                "ifeval": (6, 9),
                "iquiz/EQ": (2, 6),
                "iquiz/IQ": (5, 4),
            }.items()
            for model, passed in zip(("qwen2.5-7b-instruct", "qwen2.5-14b-instruct"), by_model, strict=True)
        },
        notes=frozenset({"plan_from_rows", "limited_run"}),
        why="6 review files x 10 rows per model (each config sets limit 10: a limited_run flag per model; the two "
        "configs differ only in model and paths, and the models are different candidates anyway), one task per "
        "dataset, and per subset for iquiz (EQ and IQ: two subsets of one dataset). Each file's default metric "
        "(7b/14b): gpqa_diamond acc 6/6, gsm8k acc 9/9, humaneval acc JSON true x10 (a boolean is 1), ifeval "
        "main_score_name prompt_level_strict 6/9, iquiz EQ 2/6 and IQ 5/4. iquiz_EQ and "
        "iquiz_IQ both use sample ids 0-9 and stay 20 cases (case ids carry the file stem); acc and "
        "prompt_level_strict are in different tasks, so no pooled_metrics flag",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "iquiz_EQ"), _review("qwen2.5-7b-instruct", "iquiz_IQ")),
        0,
        {
            ("iquiz/EQ", "qwen2.5-7b-instruct"): funnel(10, 2, not_scored=0),
            ("iquiz/IQ", "qwen2.5-7b-instruct"): funnel(10, 5, not_scored=0),
        },
        why="two subsets of iquiz with the SAME sample ids 0-9: two tasks of 10 cases each, never 10 collided "
        "ones; acc is 1 on 2 rows of iquiz_EQ.jsonl and 5 of iquiz_IQ.jsonl",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-14b-instruct", "humaneval_openai_humaneval"),),
        0,
        {"qwen2.5-14b-instruct": funnel(10, 10, not_scored=0)},
        why="humaneval acc is JSON true on all 10 rows: read as 1, a pass each",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "ifeval_default"),),
        0,
        {"qwen2.5-7b-instruct": funnel(10, 6, not_scored=0)},
        args=("--score", "prompt_level_strict"),
        why="ifeval's 4 metrics; prompt_level_strict (the rows' main_score_name) is 0/1: 6 of 10",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "ifeval_default"),),
        0,
        {"qwen2.5-7b-instruct": funnel(10, 6, not_scored=0)},
        args=("--score", "prompt_level_loose"),
        why="prompt_level_loose is 0/1 too: 6 of 10",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "ifeval_default"),),
        1,
        args=("--score", "inst_level_strict"),
        refusal_kinds=frozenset({"invalid_grade"}),
        why="inst_level_strict has fractions (0.667): not a binary grade, so --grade binary refuses",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "ifeval_default"),),
        0,
        {"qwen2.5-7b-instruct": funnel(10, None, not_scored=0)},
        args=("--score", "inst_level_strict", "--grade", "numeric"),
        why="the fractions read as numbers: 10 scored, and without --pass-threshold nothing passes (null)",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "ifeval_default"),),
        0,
        {"qwen2.5-7b-instruct": funnel(10, 8, not_scored=0)},
        args=("--score", "inst_level_strict", "--grade", "numeric", "--pass-threshold", "0.5"),
        why="inst_level_strict: 6 rows 1.0, 2 rows 0.667, 2 rows 0.0: 8 reach 0.5",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-14b-instruct", "ifeval_default"),),
        0,
        {"qwen2.5-14b-instruct": funnel(10, 9, not_scored=0)},
        args=("--score", "inst_level_loose", "--grade", "numeric", "--pass-threshold", "1"),
        why="14b inst_level_loose: 9 rows 1.0 and one 0.667: at threshold 1, 9 pass",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_review("qwen2.5-7b-instruct", "gsm8k_main"),),
        1,
        args=("--score", "AverageAccuracy"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="AverageAccuracy is the old layout's metric; these rows have only acc: refuse, naming it",
        collection="real2",
    ),
    Case(
        "evalscope",
        (_OLD,),
        0,
        {"Qwen2.5-0.5B-Instruct": funnel(10, 4, not_scored=0)},
        notes=frozenset({"plan_from_rows"}),
        why="the old EvalScope layout: choices[0].review.result true on 4 of 10 rows, metric AverageAccuracy "
        "(reviewer_spec); no sample index, so each case is its raw_input (10 distinct); the report's 0.4 agrees",
        collection="real2",
    ),
]

"""Real EvalScope outputs and their exact outcomes (numbers from SOURCES.md, third collection)."""

from tests.importers.real_table import Case, funnel

_VIZ = "evalscope/modelscope-evalscope/examples/viz"


def _files(model: str, benchmark: str, subset: str) -> tuple[str, str]:
    return (
        f"{_VIZ}/{model}/reviews/{model}/{benchmark}_{subset}.jsonl",
        f"{_VIZ}/{model}/reports/{model}/{benchmark}.json",
    )


CASES: list[Case] = [
    Case(
        "evalscope",
        _files("qwen3-max", "gsm8k", "main"),
        0,
        {"qwen3-max": funnel(10, 10)},
        notes=frozenset({"plan_from_rows"}),
        why="10 reviews (index 0-9), acc 1.0 each; the report's mean_acc num 10 score 1.0 agrees (no header note)",
    ),
    Case(
        "evalscope",
        _files("qwen3-max", "ifeval", "default"),
        0,
        {"qwen3-max": funnel(10, 8)},
        why="4 metrics per row: the rows' main_score_name prompt_level_strict is the default, 8/10 (report 0.8)",
    ),
    Case(
        "evalscope",
        _files("qwen3-max", "ifeval", "default"),
        0,
        {"qwen3-max": {"planned": 10, "scored": 10, "judge_failed": 0, "missing": 0}},
        args=("--score", "inst_level_strict", "--grade", "numeric"),
        why="the fractional inst_level_strict (report 0.8667) reads under --grade numeric: 10 scored",
    ),
    Case(
        "evalscope",
        _files("qwen3-max", "ifeval", "default"),
        1,
        args=("--score", "acc"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="IFEval has no acc metric: the import refuses, naming the four it has",
    ),
    Case(
        "evalscope",
        _files("qwen-plus", "gsm8k", "main"),
        0,
        {"qwen-plus": funnel(10, 10)},
        why="second candidate, same 10 cases: 10/10 (report 1.0)",
    ),
    Case(
        "evalscope",
        _files("qwen-plus", "ifeval", "default"),
        0,
        {"qwen-plus": funnel(10, 9)},
        why="prompt_level_strict 9/10 (report 0.9; inst_level_strict 0.9667 is not the default)",
    ),
    Case(
        "evalscope",
        (*_files("qwen3-max", "gsm8k", "main"), *_files("qwen-plus", "gsm8k", "main")),
        0,
        {"qwen3-max": funnel(10, 10), "qwen-plus": funnel(10, 10)},
        why="two models' reviews of one subset share their 10 cases (gsm8k_main/<index>)",
    ),
    Case(
        "evalscope",
        (_VIZ,),
        0,
        {
            ("gsm8k", "qwen3-max"): funnel(10, 10),
            ("gsm8k", "qwen-plus"): funnel(10, 10),
            ("ifeval", "qwen3-max"): funnel(10, 8),
            ("ifeval", "qwen-plus"): funnel(10, 9),
        },
        notes=frozenset({"plan_from_rows"}),
        why="the folder's two datasets are two tasks (one subset each, so the task is the dataset): gsm8k_main.jsonl "
        "has 10 rows per model, acc 1.0 on each (10/10 and 10/10); ifeval_default.jsonl 10 rows, main_score_name "
        "prompt_level_strict 1 on 8 (qwen3-max) and 9 (qwen-plus); acc and prompt_level_strict never share a "
        "rate, so no pooled_metrics note (SOURCES audits each benchmark apart)",
    ),
]

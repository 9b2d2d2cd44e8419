"""Real helm exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md). Counts are from ``scenario_state.json``
(instances) and ``per_instance_stats.json`` (each instance's stats), counted with plain json.
"""

from tests.importers.real_table import Case, funnel

PR2828 = "helm/stanford-crfm-helm-PR2828"
BBQ = "bbq:subject=all,method=multiple_choice_joint"
LLAMA_V1 = f"{PR2828}/benchmark_output_bbq/runs/v1/{BBQ},model=meta_llama-3-8b"
GPT4T_V1 = f"{PR2828}/benchmark_output_bbq/runs/v1/{BBQ},model=openai_gpt-4-turbo-2024-04-09"
LLAMA_V3 = f"{PR2828}/benchmark_output_TRUE_latest/runs/v3/{BBQ},model=meta_llama-3-8b"
HARM = f"{PR2828}/benchmark_output_TRUE_latest/runs/v3/harm_bench:model=meta_llama-3-8b"

LLAMA, GPT4T = "meta/llama-3-8b", "openai/gpt-4-turbo-2024-04-09"



CASES: list[Case] = [
    Case(
        "helm",
        (LLAMA_V1,),
        0,
        {LLAMA: funnel(50, 30)},
        why="bbq llama v1 (max_eval_instances 50): 50 test instances, exact_match 30 x 1",
        collection="real2",
    ),
    Case(
        "helm",
        (GPT4T_V1, LLAMA_V3),
        0,
        {GPT4T: funnel(1, 1), LLAMA: funnel(2, 1)},
        why="two suites, two models: gpt-4-turbo id58485 1.0; llama v3 id58485 1.0, id58351 0.0",
        collection="real2",
    ),
    Case(
        "helm",
        (LLAMA_V1, LLAMA_V3),
        0,
        {f"{LLAMA} [max_train_instances=5]": funnel(50, 30), f"{LLAMA} [max_train_instances=0]": funnel(2, 1)},
        notes=frozenset({"settings_differ"}),
        why="one run spec in two suites: v1 is 5-shot (max_train_instances 5), v3 0-shot: different settings, "
        "so different candidates, never two attempts of id58485 (was refused as duplicate_key); "
        "max_eval_instances (50 vs 2) chooses how many instances run and is not a setting",
        collection="real2",
    ),
    Case(
        "helm",
        (HARM,),
        1,
        refusal_kinds=frozenset({"unknown_score"}),
        why="LLM-judge stats only, no exact_match: refuse naming the stats and --score harm_bench_score",
        collection="real2",
    ),
    Case(
        "helm",
        (HARM,),
        0,
        {LLAMA: funnel(2, None)},
        args=("--score", "harm_bench_score", "--grade", "numeric"),
        why="string instance ids; harm_bench_score 0.25 and 0.0 are numeric: without --pass-threshold passed is null",
        collection="real2",
    ),
]

"""Real lm_eval exports and their exact outcomes (numbers from SOURCES.md, recounted from the raw rows).

A Case naming a folder covers the results and samples files inside it (results files are read with
their folder or as the sibling of a samples file, never as an export on their own except where noted).
"""

from tests.importers.real_table import Case, funnel

_PR1974 = "lm_eval/EleutherAI-lm-evaluation-harness-PR1974/lm_eval/tasks"
BIAS = f"{_PR1974}/bias_classification/results/meta-llama__Meta-Llama-3-8B"
STEREO = f"{_PR1974}/stereotype_classification/results/meta-llama__Meta-Llama-3-8B"
ASDIV = "lm_eval/EleutherAI-lm-evaluation-harness-PR2236/results/asdiv_cot/meta-llama__Meta-Llama-3-8B-Instruct"
TRUTHFULQA = (
    "lm_eval/EleutherAI-lm-evaluation-harness-PR3032/results/samples_truthfulqa_gen_2025-05-31T14-30-51.983293.jsonl"
)
TG = "lm_eval/EleutherAI-lm-evaluation-harness-PR3144/results/tgpred.json/gpt-4o-mini"
FLOR = "lm_eval/EleutherAI-lm-evaluation-harness-PR3168/results/FLOR-760M"
FLOR_TS = "2025-07-21T14-41-47.889425"
NER = "lm_eval/EleutherAI-lm-evaluation-harness-PR3506/african_nlp_benchmarks/google__gemma-2b"
NEGO = "lm_eval/EleutherAI-lm-evaluation-harness-PR3936/outputs/qwen3-8b/negotiationtom/Qwen__Qwen3-8B"
R1, R2, R3 = "2026-07-08T16-04-34.219874", "2026-07-08T17-52-34.622576", "2026-07-08T18-15-33.115417"
MATH = "lm_eval/evaleval-every_eval_ever/tests/data/lm_eval"

LLAMA = "meta-llama/Meta-Llama-3-8B"
INSTRUCT = "meta-llama/Meta-Llama-3-8B-Instruct"
QWEN = "Qwen/Qwen3-8B"
FLOR_MODEL = "/gpfs/projects/bsc88/hf-models/FLOR-760M"
MATH_MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"




CASES: list[Case] = [
    # --- PR1974: older layout, JSON Lines named .json ---
    Case(
        "lm-eval",
        (BIAS,),
        0,
        {LLAMA: funnel(609, 311)},
        why="bias_classification: acc 311/609 (= results acc 0.5107), default metric acc",
    ),
    Case(
        "lm-eval",
        (f"{BIAS}/samples_bias_classification_2024-06-17T15-44-37.867068.json",),
        0,
        {LLAMA: funnel(609, 311)},
        why="the samples file alone finds its results file by timestamp",
    ),
    Case(
        "lm-eval",
        (f"{BIAS}/samples_bias_classification_2024-06-17T15-44-37.867068.json",),
        0,
        {LLAMA: {"planned": 609, "attempted": 609, "scored": 0, "not_scored": 609, "judge_failed": 0}},
        args=("--score", "f1"),
        notes=frozenset({"not_a_score"}),
        why="f1 per row is a (gold, pred) pair: never a per-row score, so not_scored (not a grader failure)",
    ),
    Case(
        "lm-eval",
        (STEREO,),
        0,
        {LLAMA: funnel(609, 336)},
        why="stereotype_classification: acc 336/609 (= results acc 0.5517)",
    ),
    Case(
        "lm-eval",
        (f"{STEREO}/samples_stereotype_classification_2024-06-17T16-12-47.023639.json",),
        0,
        {LLAMA: funnel(609, 336)},
        why="samples file alone, same counts",
    ),
    # --- PR2236: two --limit 50 runs of asdiv ---
    Case(
        "lm-eval",
        (ASDIV,),
        0,
        {INSTRUCT: funnel(50, 46, ran=50)},
        notes=frozenset({"limited_run", "retry_after_scored"}),
        why="two --limit 50 runs of the same 50 docs: 50 units x 2 attempts, first counts (46/50 = 0.92); the plan is "
        "the 50 docs the runs were set to run (n-samples.effective), not the task's 2305",
    ),
    Case(
        "lm-eval",
        (f"{ASDIV}/samples_asdiv_2024-08-21T03-40-10.802679.jsonl",),
        0,
        {INSTRUCT: funnel(50, 46, ran=50)},
        notes=frozenset({"limited_run"}),
        why="first run alone",
    ),
    Case(
        "lm-eval",
        (f"{ASDIV}/samples_asdiv_2024-08-21T03-41-15.831724.jsonl",),
        0,
        {INSTRUCT: funnel(50, 46, ran=50)},
        notes=frozenset({"limited_run"}),
        why="second run alone: the runs agree on every doc",
    ),
    # --- PR3032: truthfulqa_gen, several per-row metrics, no results file ---
    Case(
        "lm-eval",
        (TRUTHFULQA,),
        1,
        refusal_kinds=frozenset({"ambiguous_score"}),
        why="12 per-row metrics (bleu/rouge max, acc, diff) and none declared: refuse rather than pick one",
    ),
    Case(
        "lm-eval",
        (TRUTHFULQA,),
        0,
        {"unknown-model": funnel(20, 10)},
        args=("--score", "bleu_acc"),
        notes=frozenset({"plan_from_rows"}),
        why="bleu_acc 10/20; no results file: model not recorded (unknown-model), plan = the 20 doc ids present",
    ),
    Case(
        "lm-eval",
        (TRUTHFULQA,),
        0,
        {"unknown-model": funnel(20, 9)},
        args=("--score", "rougeL_acc"),
        why="rougeL_acc 9/20",
    ),
    # --- PR3144: polymer_tg_prediction, mae with bare Infinity ---
    Case(
        "lm-eval",
        (TG,),
        0,
        {
            "gpt-4o-mini": {
                "planned": 24,
                "attempted": 24,
                "completed": 24,
                "scored": 7,
                "missing": 0,
                "exec_failed": 0,
                "judge_failed": 17,
            }
        },
        args=("--grade", "numeric", "--score-range", "0", "1000"),
        notes=frozenset({"nonfinite_score"}),
        why="17 rows mae = Infinity (unparsed answer): judge_error, never a score; 7 finite maes",
    ),
    Case(
        "lm-eval",
        (f"{TG}/samples_polymer_tg_prediction_2025-06-30T19-40-09.461247.jsonl",),
        1,
        refusal_kinds=frozenset({"invalid_grade"}),
        why="mae read as a binary grade (the audit default) refuses: the 7 finite maes are not 0/1",
    ),
    # --- PR3168: FLOR-760M, results file written by --output_path x.json ---
    Case(
        "lm-eval",
        (FLOR,),
        0,
        {
            (task, FLOR_MODEL): {
                "planned": 10,
                "attempted": 10,
                "completed": 10,
                "scored": 0,
                "missing": 0,
                "exec_failed": 0,
                "judge_failed": 10,
            }
            for task in ("eqbench_ca", "eqbench_es")
        },
        notes=frozenset({"limited_run", "not_a_score"}),
        why="<stem>_<date>.json linked by timestamp: --limit 10 of 167 and of 168, 10 planned per task; "
        "percent_parseable 0 on every row, so "
        "the 20 eqbench zeros are grader failures (judge_error), not graded zeros",
    ),
    Case(
        "lm-eval",
        (f"{FLOR}/samples_eqbench_ca_{FLOR_TS}.jsonl",),
        0,
        {FLOR_MODEL: {"planned": 10, "attempted": 10, "scored": 0, "missing": 0, "judge_failed": 10}},
        why="eqbench_ca alone: n-samples 167/10, the 10 docs run are planned",
    ),
    Case(
        "lm-eval",
        (f"{FLOR}/samples_eqbench_es_{FLOR_TS}.jsonl",),
        0,
        {FLOR_MODEL: {"planned": 10, "attempted": 10, "scored": 0, "missing": 0, "judge_failed": 10}},
        why="eqbench_es alone: n-samples 168/10, the 10 docs run are planned",
    ),
    # --- PR3506: masakhaner, named filter flexible-extract, f1 pairs ---
    Case(
        "lm-eval",
        (NER,),
        0,
        {
            "google/gemma-2b": {
                "planned": 185,
                "attempted": 185,
                "completed": 185,
                "scored": 0,
                "not_scored": 185,
                "judge_failed": 0,
                "missing": 0,
            }
        },
        notes=frozenset({"not_a_score"}),
        why="the only metric f1 is corpus-level (per-row pairs): scored 0; one filter, so none needs declaring",
    ),
    # --- PR3936: negotiationtom, --limit 20, three runs ---
    Case(
        "lm-eval",
        (NEGO,),
        0,
        {
            ("negotiationtom_belief", QWEN): funnel(20, 9, ran=20),
            ("negotiationtom_desire", QWEN): funnel(20, 12, ran=20),
            ("negotiationtom_intention", QWEN): funnel(20, 4, ran=20),
        },
        notes=frozenset({"limited_run", "retry_after_scored", "header_rows_disagree"}),
        why="3 tasks planned from n-samples.effective (--limit 20 of 13812, 13812, 4618), each its own row; first "
        "run: belief 9, desire 12, intention 4 of 20 each",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_belief_{R1}.jsonl",),
        0,
        {QWEN: funnel(20, 9, ran=20)},
        notes=frozenset({"limited_run"}),
        why="belief 16-04: acc 9/20; --limit 20 plans the 20 docs run (of 13812, said in limited_run)",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_belief_{R3}.jsonl",),
        0,
        {QWEN: funnel(20, 9, ran=20)},
        why="belief 18-15: same acc values",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_desire_{R1}.jsonl", f"{NEGO}/samples_negotiationtom_desire_{R3}.jsonl"),
        0,
        {QWEN: funnel(20, 12, ran=20)},
        notes=frozenset({"retry_after_scored", "limited_run"}),
        why="two desire runs: run-as-attempt, 20 units x 2 attempts (no duplicate keys); first: 12/20",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_intention_{R1}.jsonl",),
        0,
        {QWEN: funnel(20, 4, ran=20)},
        why="intention 16-04: exact_match 4/20 (micro/macro f1 are per-row lists, not offered as the default)",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_intention_{R2}.jsonl",),
        0,
        {QWEN: funnel(20, 4, ran=20)},
        why="intention 17-52 (its results file: micro_f1 0.3019)",
    ),
    Case(
        "lm-eval",
        (f"{NEGO}/samples_negotiationtom_intention_{R3}.jsonl",),
        0,
        {QWEN: funnel(20, 4, ran=20)},
        why="intention 18-15",
    ),
    # --- every_eval_ever: trimmed math samples ---
    Case(
        "lm-eval",
        (MATH,),
        0,
        {
            ("math_perturbed_full", MATH_MODEL): funnel(5000, 0, ran=10),
            ("math_rephrased_full", MATH_MODEL): funnel(5000, 0, ran=0),
        },
        notes=frozenset({"header_rows_disagree"}),
        why="header 5000 effective per task, 10 rows of one task: coverage from rows; rephrased task all missing",
    ),
    Case(
        "lm-eval",
        (f"{MATH}/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",),
        0,
        {MATH_MODEL: funnel(5000, 0, ran=10)},
        why="trimmed samples file alone: 10 of 5000",
    ),
    Case(
        "lm-eval",
        (f"{MATH}/results_2026-01-21T03-44-18.458309.json",),
        0,
        {
            (task, MATH_MODEL): {"planned": 5000, "attempted": 0, "scored": 0, "missing": 5000}
            for task in ("math_perturbed_full", "math_rephrased_full")
        },
        why="results file alone: a header-only export, nothing ran as far as rows show",
    ),
]

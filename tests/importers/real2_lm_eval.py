"""Real lm_eval exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md). A Case naming a folder covers the results
and samples files inside it. Every count below is from the samples rows (``doc_id``, ``filter``,
``exact_match``) and the results files' ``n-samples``, counted with plain json, never read back from evalframe.
"""

from tests.importers.real_table import Case, funnel

PMEMOLI = "lm_eval/pmemoli-Data-Science-Thesis/src/data/benchmark_results/gsm8k"
OLOT = "lm_eval/containers-olot/tests/data/lmeh"
FADE = "lm_eval/DanielKluev-pyFade/tests/data"
FADE_U1 = f"{FADE}/samples_gsm8k_2025-09-09T13-31-53.431753.jsonl"
FADE_Q4 = f"{FADE}/samples_gsm8k_2025-09-09T13-42-42.857006.jsonl"
FADE_RESULTS = tuple(f"{FADE}/results_{ts}.json" for ts in ("2025-09-09T13-31-53.431753", "2025-09-09T13-42-42.857006"))
MMLU_PP = f"{FADE}/eval_mmlu_pro_plus"
MMLU_PP_SAMPLES = tuple(
    f"{MMLU_PP}/samples_mmlu_pro_plus_{subject}_{ts}.jsonl"
    for subject in ("chemistry", "health", "psychology")
    for ts in ("2025-10-14T14-44-39.372006", "2025-10-14T15-11-56.507865")
)

PHI = "microsoft/Phi-3-mini-4k-instruct"
U1, Q4 = "gemma3:12b-u1", "gemma3:12b-it-q4_K_M"
U2, BASE = "/workspace/gemma3_12b_u2", "/workspace/gemma-3-12b-it-base"
#: exact_match 1.0 rows of each 3-row samples file (14-44: U2, 15-11: BASE, by their results files' model_name).
MMLU_PP_PASSED = {
    ("chemistry", U2): 1,  # docs 0, 6, 7: 1, 0, 0
    ("chemistry", BASE): 2,  # 1, 0, 1
    ("health", U2): 1,  # docs 12, 13, 14: 0, 0, 1
    ("health", BASE): 2,  # 0, 1, 1
    ("psychology", U2): 1,  # docs 8, 9, 10: 1, 0, 0
    ("psychology", BASE): 2,  # 1, 1, 0
}
#: The subtasks the results files' n-samples name (100 effective each) without a samples file.
MMLU_PP_UNSAMPLED = (
    "biology", "business", "computer_science", "economics", "engineering", "history", "law", "math", "other",
    "philosophy", "physics",
)  # fmt: skip
STRICT = ("--score", "exact_match,strict-match")



CASES: list[Case] = [
    # --- pmemoli: gsm8k --limit 10 of 1319, both filters in the rows (10 docs x 2 = 20 rows) ---
    Case(
        "lm-eval",
        (PMEMOLI,),
        1,
        refusal_kinds=frozenset({"ambiguous_rows"}),
        why="20 rows = 10 docs x 2 filters and none declared: refuse rather than pool two extractions",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (PMEMOLI,),
        0,
        {PHI: funnel(10, 1, ran=10)},
        args=STRICT,
        notes=frozenset({"limited_run"}),
        why="strict-match 1/10 (= results 0.1); --limit 10 plans the 10 docs run (doc ids 0-9), not 1319",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (PMEMOLI,),
        0,
        {PHI: funnel(10, 8, ran=10)},
        args=("--score", "exact_match,flexible-extract"),
        notes=frozenset({"limited_run"}),
        why="flexible-extract 8/10 (= results 0.8)",
        collection="real2",
    ),
    # --- containers-olot: trimmed samples (3 strict-match rows), results list two filters, no limit ---
    Case(
        "lm-eval",
        (OLOT,),
        1,
        refusal_kinds=frozenset({"ambiguous_rows"}),
        why="the results file reports strict-match and flexible-extract: the run was graded under two filters, "
        "so one must be declared even though the trimmed samples file kept strict-match rows only",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (OLOT,),
        0,
        {"tinyllama": funnel(1319, 0, ran=3)},
        args=STRICT,
        notes=frozenset({"header_rows_disagree"}),
        why="no limit: n-samples.effective 1319 planned; 3 rows (docs 0-2), exact_match 0 each; 1316 missing",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (OLOT,),
        0,
        {"tinyllama": funnel(1319, 0, ran=0)},
        args=("--score", "exact_match,flexible-extract"),
        notes=frozenset({"header_rows_disagree"}),
        why="the flexible-extract rows were trimmed away: 1319 planned, none has a row (missing, never failed)",
        collection="real2",
    ),
    # --- DanielKluev: two gsm8k runs of two models, --limit 100, 3 strict-match rows each (docs 16-18) ---
    Case(
        "lm-eval",
        (FADE_U1, FADE_Q4),
        1,
        refusal_kinds=frozenset({"ambiguous_rows"}),
        why="the results files report two filters (strict-match 0.75/0.77, flexible-extract 0.78/0.81)",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (FADE_U1, FADE_Q4),
        0,
        {U1: funnel(100, 1, ran=3), Q4: funnel(100, 2, ran=3)},
        args=STRICT,
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="read together: two models, two candidates; --limit 100 plans docs 0-99 each; 1/3 and 2/3 scored",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (*FADE_RESULTS, FADE_U1, FADE_Q4),
        0,
        {U1: funnel(100, 1, ran=3), Q4: funnel(100, 2, ran=3)},
        args=STRICT,
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="the results files named beside their samples files: the same two runs as when found beside them",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (FADE_U1,),
        0,
        {U1: funnel(100, 1, ran=3)},
        args=STRICT,
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="gemma3:12b-u1 alone: the same counts as read together",
        collection="real2",
    ),
    Case(
        "lm-eval",
        (FADE_Q4,),
        0,
        {Q4: funnel(100, 2, ran=3)},
        args=STRICT,
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="gemma3:12b-it-q4_K_M alone",
        collection="real2",
    ),
    # --- DanielKluev: group mmlu_pro_plus, 14 subtasks, --limit 100, samples for 3 subtasks x 3 docs ---
    Case(
        "lm-eval",
        (MMLU_PP,),
        0,
        {
            **{(f"mmlu_pro_plus_{s}", c): funnel(100, 0, ran=0) for s in MMLU_PP_UNSAMPLED for c in (U2, BASE)},
            **{(f"mmlu_pro_plus_{s}", c): funnel(100, n, ran=3) for (s, c), n in MMLU_PP_PASSED.items()},
        },
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="the folder's results files declare 14 subtasks each run on 100 docs (n-samples.effective; the "
        "group itself is an aggregate, not a task): each subtask is a task of 100 planned units, and the 11 "
        "subtasks without a samples file are missing (header_rows_disagree names them), not dropped from the "
        "plan; one filter (custom-extract) needs no declaration",
        collection="real2",
    ),
    Case(
        "lm-eval",
        MMLU_PP_SAMPLES,
        0,
        {(f"mmlu_pro_plus_{s}", c): funnel(100, n, ran=3) for (s, c), n in MMLU_PP_PASSED.items()},
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="the 6 samples files alone plan only their 3 subtasks (100 docs each) per model",
        collection="real2",
    ),
]

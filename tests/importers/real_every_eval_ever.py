"""Real every_eval_ever records and their exact outcomes (numbers from SOURCES.md, "every_eval_ever schema")."""

from tests.importers.real_table import Case

PR30 = "every_eval_ever/evaleval-every_eval_ever-PR30"
SONNET = f"{PR30}/data/ai2_arc/anthropic/claude-sonnet-4-0/0479dd23-e008-47f5-a790-15e7cbb08fc7.json"
SONNET_ROWS = (
    f"{PR30}/instance_level_data/ai2_arc_anthropic_claude-sonnet-4-0_3386284e-669c-440a-a7f0-90993d81873d.Format.jsonl"
)
QWEN = f"{PR30}/data/ai2_arc/ollama/qwen2.5-0.5b/75e7b3c4-5d2f-4526-aef0-9ccd88690f5a.json"
QWEN_ROWS = f"{PR30}/instance_level_data/ai2_arc_ollama_qwen2.5:0.5b_2e4e64ca-5622-42d3-9ef1-0f4e4475cdf7.Format.jsonl"
GAIA = f"{PR30}/data/GAIA/openai/gpt-4.1-mini-2025-04-14/5917cc37-8805-4453-bf5f-13411ea66ccf.json"
GAIA_ROWS = f"{PR30}/instance_level_data/GAIA_openai_azure_gpt-4.1-mini-2025-04-14_" + (
    "aaf3a6fe-fe1e-41ad-9707-4e6f948086ca.Format.jsonl"
)
TESTS = "every_eval_ever/evaleval-every_eval_ever/tests/data"
OPEN_LLM = f"{TESTS}/98ea850e-7019-4728-a558-8b1819ec47c2.json"
DEMO = f"{TESTS}/skill_reference_conversion/data/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"

ALL_CLEAN = {"missing": 0, "exec_failed": 0, "judge_failed": 0}

CASES: list[Case] = [
    Case(
        "every-eval-ever",
        (SONNET, SONNET_ROWS),
        0,
        {"anthropic/claude-sonnet-4-0": {"planned": 5, "attempted": 5, "scored": 5, "passed": 5, **ALL_CLEAN}},
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="sample_ids 1-5 of samples_number 2376 (limited_run); 5 rows score 1.0; the rows' evaluation_id is "
        "not the record's (header_rows_disagree)",
    ),
    Case(
        "every-eval-ever",
        (QWEN, QWEN_ROWS),
        0,
        {"ollama/qwen2.5-0.5b": {"planned": 3, "attempted": 3, "scored": 3, "passed": 1, **ALL_CLEAN}},
        notes=frozenset({"limited_run"}),
        why="3 rows 1.0, 0.0, 0.0 (aggregate 0.3333 agrees); the instance file name contains ':'",
    ),
    Case(
        "every-eval-ever",
        (QWEN,),
        0,
        {"ollama/qwen2.5-0.5b": {"planned": 3, "scored": 3, "passed": None}},
        args=("--grade", "numeric"),
        why="--grade numeric reads evaluation.score, and a number passes only against --pass-threshold: passed "
        "null (is_correct is the binary reading); the instance file is found "
        "from the record's file_path (relative to the repository root, two folders up)",
    ),
    Case(
        "every-eval-ever",
        (QWEN,),
        0,
        {"ollama/qwen2.5-0.5b": {"planned": 3, "scored": 3, "passed": 1}},
        args=("--grade", "numeric", "--pass-threshold", "0.5"),
        why="evaluation.score 1.0, 0.0, 0.0 against the declared threshold 0.5: 1 passes",
    ),
    Case(
        "every-eval-ever",
        (QWEN,),
        1,
        args=("--score", "acc"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="a --score the rows do not carry refuses, naming is_correct and score",
    ),
    Case(
        "every-eval-ever",
        (SONNET, QWEN),
        0,
        {
            "anthropic/claude-sonnet-4-0": {"planned": 5, "scored": 5, "passed": 5, "missing": 0},
            "ollama/qwen2.5-0.5b": {"planned": 3, "scored": 3, "passed": 1, "missing": 0},
        },
        why="two candidates on one task with different coverage: each is planned on its own sample_ids",
    ),
    Case(
        "every-eval-ever",
        (GAIA, GAIA_ROWS),
        0,
        {"openai/gpt-4.1-mini-2025-04-14": {"planned": 2, "attempted": 2, "scored": 2, "passed": 0, **ALL_CLEAN}},
        notes=frozenset({"limited_run"}),
        why="2 UUID sample_ids of 165; both rows score 0.0, one hit the message limit (num_turns 100) and is "
        "still scored",
    ),
    Case(
        "every-eval-ever",
        (PR30,),
        0,
        {
            ("ai2_arc", "anthropic/claude-sonnet-4-0"): {"planned": 5, "scored": 5, "passed": 5, **ALL_CLEAN},
            ("ai2_arc", "ollama/qwen2.5-0.5b"): {"planned": 3, "scored": 3, "passed": 1, **ALL_CLEAN},
            ("GAIA", "openai/gpt-4.1-mini-2025-04-14"): {"planned": 2, "scored": 2, "passed": 0, **ALL_CLEAN},
        },
        notes=frozenset({"limited_run"}),
        why="the folder's 3 records name 2 datasets (source_data.dataset_name ai2_arc twice, GAIA once): two tasks, "
        "so no rate or ranking sets one model's ARC against another's GAIA. Instance rows' evaluation.is_correct: "
        "sonnet 5 true of 5, qwen 1 of 3 (true, false, false), gpt-4.1-mini 0 of 2; each record's sample_ids "
        "plan its units",
    ),
    Case(
        "every-eval-ever",
        (OPEN_LLM,),
        1,
        refusal_kinds=frozenset({"empty_plan"}),
        why="an aggregate of 6 benchmark scores with no sample_ids and no instance file: no per-sample evidence, "
        "so nothing is audited (never a rate from the 6 scores)",
    ),
    Case(
        "every-eval-ever",
        (f"{DEMO}.json", f"{DEMO}_samples.jsonl"),
        0,
        {"demo-org/demo-model": {"planned": 1, "attempted": 1, "scored": 1, "passed": 1, **ALL_CLEAN}},
        notes=frozenset({"header_rows_disagree", "plan_from_rows"}),
        why="schema 0.3.0: aggregate score 0.75 against its one row scored 1.0 (rows are the evidence); no "
        "sample_ids, so the plan is the row's id",
    ),
]

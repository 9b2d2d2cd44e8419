"""Real inspect_ai exports and their exact outcomes (numbers from SOURCES.md, recounted from the raw logs).

Paths are relative to ``../shared/data/real``. Every count is per candidate
(the log's ``eval.model``); the plan is the header's ``eval.dataset.sample_ids``
× epochs, so a ``--limit`` run plans the samples it lists (``limited_run``).
"""

from tests.importers.real_table import Case

_UK = "inspect_ai/UKGovernmentBEIS-inspect_ai/tests"
_LOG_STREAMING = f"{_UK}/log/test_eval_log/log_streaming.eval"
_TOOL_CALL_ERROR = f"{_UK}/log/test_eval_log/log_tool_call_error.json"
_CANCELLED = f"{_UK}/analysis/test_logs/2025-05-12T20-28-13-04-00_popularity.json"
_NO_SAMPLES = f"{_UK}/analysis/test_logs/2025-05-12T20-28-13-04-00_no-samples.json"
_SECURITY_JSON = f"{_UK}/analysis/test_logs/2025-05-12T20-28-26-04-00_security-guide.json"
_NO_SCORER = f"{_UK}/scorer/logs/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
_SCORED_TWIN = f"{_UK}/scorer/logs/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
_SET_OK = f"{_UK}/test_eval_set/2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json"
_SET_ERROR = f"{_UK}/test_eval_set/2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json"
_EVAL_SET = "inspect_ai/UKGovernmentBEIS-inspect_ai-PR2488/eval-set1"
_FIXTURES = "tests/_helpers/fixtures"
_ZSTD_LEGACY = f"inspect_ai/UKGovernmentBEIS-inspect_ai-PR3860/{_FIXTURES}/legacy/retry-2-then-success.eval"
_ZSTD_POSTFIX = f"inspect_ai/UKGovernmentBEIS-inspect_ai-PR4526/{_FIXTURES}/postfix/retry-2-then-success.eval"
_METR = "inspect_ai/METR-inspect-action/tests"
_METR_SMALL = f"{_METR}/core/importer/data_fixtures/eval_logs/small.eval"
_CLASS_EVAL = f"{_METR}/runner/data_fixtures/eval_logs/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval"
_SCOUT = "inspect_ai/meridianlabs-ai-inspect_scout/tests/recorder/logs"
_SCOUT_POPULARITY = f"{_SCOUT}/2025-09-23T08-09-58-04-00_popularity_DN2wbX2ZvACsBpjwptzBRo.eval"
_SCOUT_SECURITY = f"{_SCOUT}/2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval"
_CCOT = "inspect_ai/YuehHanChen-ccot_oe_results/logs/2025-08-2"
_INNER = "word_avoidance_open_ended-inner"
_GROK = f"{_CCOT}7T22-28-46-04-00_{_INNER}_openrouter_x_ai_grok_3_mini_Yz5aWzc6um7tnxWBzmrmo8.json"
_DEEPSEEK = (
    f"{_CCOT}7T22-46-44-04-00_{_INNER}_openrouter_deepseek_deepseek_r1_distill_qwen_14b_EFhwoRj2e8JD36sB5VxqbY.json"
)
_OPUS = f"{_CCOT}8T13-51-10-04-00_{_INNER}_anthropic_claude_opus_4_20250514_Wpz475ch23hBrtFBuPzHYF.json"
_SONNET_37 = f"{_CCOT}8T14-03-04-04-00_{_INNER}_anthropic_claude_3_7_sonnet_20250219_ChYLYyerDb8JEXVGkY4MNv.json"
_GPT_OSS = f"{_CCOT}8T15-10-38-04-00_{_INNER}_openrouter_openai_gpt_oss_20b_77vw5ZNmUYAQQPmRnvEXQc.json"
_EE = "inspect_ai/evaleval-every_eval_ever/tests/data/inspect"

_GPT4O_MINI = "openai/gpt-4o-mini"
_CCOT_NO_GRADES = {"planned": 2970, "attempted": 10, "completed": 10, "scored": 0, "not_scored": 10, "missing": 2960}
_ZSTD_RUN = {"planned": 1, "attempted": 1, "completed": 1, "scored": 0, "not_scored": 1, "exec_failed": 0}


def _inspect(*paths: str, **fields: object) -> Case:
    return Case("inspect", paths, **fields)  # type: ignore[arg-type]


CASES: list[Case] = [
    # --- first collection ---
    _inspect(
        _LOG_STREAMING,
        exit_code=0,
        counts={
            "azureai/Meta-Llama-3-1-405B-Instruct-jqf": {
                "planned": 4,
                "attempted": 4,
                "completed": 4,
                "scored": 4,
                "passed": 3,
                "missing": 0,
            }
        },
        notes=frozenset({"limited_run"}),
        why="2 sample ids x 2 epochs, C,C,C,I; --limit 2 of a 100-sample dataset",
    ),
    _inspect(
        _CANCELLED,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 3, "attempted": 3, "scored": 3, "passed": 2, "missing": 0}},
        notes=frozenset({"run_status", "limited_run"}),
        why="status cancelled; sample_ids lists 3 of 100 (C,C,I)",
    ),
    _inspect(
        _NO_SCORER,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 10, "attempted": 10, "completed": 10, "scored": 0, "not_scored": 10}},
        why="no scorer ran: every unit completed but not_scored",
    ),
    _inspect(
        _SCORED_TWIN,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 10, "completed": 10, "scored": 10, "passed": 8, "missing": 0}},
        why="the scored twin: 8 C, 2 I",
    ),
    _inspect(
        _NO_SCORER,
        _SCORED_TWIN,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 10, "attempted": 10, "completed": 10, "scored": 0, "not_scored": 10}},
        why="the twins are two runs of one task and model: attempt 1 is the earlier (15:17, unscored) run, which "
        "counts under the default retry policy first",
    ),
    _inspect(
        _SET_OK,
        exit_code=1,
        refusal_kinds=frozenset({"empty_candidates", "empty_plan"}),
        why="header only, no sample_ids and no samples: nothing planned, no rates",
    ),
    _inspect(
        _SET_ERROR,
        exit_code=1,
        refusal_kinds=frozenset({"empty_candidates", "empty_plan"}),
        why="header only (status error): nothing planned, no rates",
    ),
    _inspect(
        _SET_OK,
        _SET_ERROR,
        exit_code=1,
        refusal_kinds=frozenset({"empty_candidates", "empty_plan"}),
        why="two header-only logs of one eval-set task (a retried task): still nothing planned",
    ),
    _inspect(
        _METR_SMALL,
        exit_code=0,
        counts={
            "anthropic/claude-opus-4-1-20250805": {"planned": 6, "attempted": 6, "scored": 6, "passed": 6, "missing": 0}
        },
        why="1 string id x 6 epochs, numeric score 1 each",
    ),
    _inspect(
        _SCOUT_POPULARITY,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 100, "completed": 100, "scored": 100, "passed": 63, "missing": 0}},
        why="a complete clean 100-case run, 63 C",
    ),
    _inspect(
        _GROK,
        exit_code=0,
        counts={"openrouter/x-ai/grok-3-mini": _CCOT_NO_GRADES},
        why="trimmed to 10 of 2970 planned samples, no scorer",
    ),
    _inspect(
        _DEEPSEEK,
        exit_code=0,
        counts={
            "openrouter/deepseek/deepseek-r1-distill-qwen-14b": {
                "planned": 2970,
                "attempted": 10,
                "completed": 9,
                "exec_failed": 1,
                "scored": 0,
                "not_scored": 9,
                "missing": 2960,
            }
        },
        notes=frozenset({"header_rows_disagree"}),
        why="sample 572 has an error (503): an execution failure, though the header says 10 completed",
    ),
    _inspect(
        _OPUS,
        exit_code=0,
        counts={"anthropic/claude-opus-4-20250514": _CCOT_NO_GRADES},
        why="third ungraded candidate on the same 10 cases",
    ),
    _inspect(
        _EE + "/data_arc_qwen.json",
        exit_code=0,
        counts={"ollama/qwen2.5:0.5b": {"planned": 3, "attempted": 3, "scored": 3, "passed": 1, "missing": 0}},
        notes=frozenset({"limited_run"}),
        why="3 of 2376 samples, 1 C 2 I",
    ),
    _inspect(
        _EE + "/data_arc_sonnet.json",
        exit_code=0,
        counts={"anthropic/claude-sonnet-4-0": {"planned": 5, "attempted": 5, "scored": 5, "passed": 5, "missing": 0}},
        notes=frozenset({"limited_run"}),
        why="5 of 2376 samples, 5 C",
    ),
    _inspect(
        _EE + "/data_arc_qwen.json",
        _EE + "/data_arc_sonnet.json",
        exit_code=0,
        counts={
            "ollama/qwen2.5:0.5b": {"planned": 3, "scored": 3, "passed": 1, "missing": 0},
            "anthropic/claude-sonnet-4-0": {"planned": 5, "scored": 5, "passed": 5, "missing": 0},
        },
        why="two candidates with different planned units (each log's own sample_ids): a units table, not a "
        "cross product; against a frozen plan of ids 1-5 qwen misses 4 and 5 (tested in test_inspect_ai)",
    ),
    _inspect(
        _EE + "/data_cvebench_empty_choices.json",
        exit_code=0,
        counts={
            "anthropic/claude-opus-4-6": {"planned": 1, "attempted": 1, "completed": 0, "exec_failed": 1, "scored": 0}
        },
        notes=frozenset({"header_rows_disagree"}),
        why="the one sample's sandbox did not start: an execution error, not a wrong answer",
    ),
    _inspect(
        _EE + "/data_intercode_ctf_local_path.json",
        exit_code=0,
        counts={
            "mistral/mistral-small-latest": {"planned": 1, "attempted": 1, "completed": 1, "scored": 1, "passed": 0}
        },
        notes=frozenset({"id_normalised", "header_rows_disagree"}),
        why="the sample hit its message limit and was still scored I; header id '0' vs sample id 0",
    ),
    # --- second collection ---
    _inspect(
        _NO_SAMPLES,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 3, "attempted": 0, "scored": 0, "missing": 3}},
        notes=frozenset({"header_rows_disagree", "run_status"}),
        why="header claims 3 completed samples, the log has none: all missing, never 3/3",
    ),
    _inspect(
        _CLASS_EVAL,
        exit_code=0,
        counts={"openai/gpt-5-nano": {"planned": 5, "attempted": 5, "scored": 5, "passed": 5, "missing": 0}},
        notes=frozenset({"limited_run"}),
        why="ids ClassEval_0..4 (entry names split on the last _epoch_), 5 of 100 samples",
    ),
    _inspect(
        _SCOUT_SECURITY,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 16, "attempted": 16, "scored": 16, "passed": 11, "missing": 0}},
        why="complete run with an LLM-judge scorer, 11 C 5 I",
    ),
    _inspect(
        _SONNET_37,
        exit_code=0,
        counts={"anthropic/claude-3-7-sonnet-20250219": _CCOT_NO_GRADES},
        why="trimmed to 10 (other) ids of 2970 planned",
    ),
    _inspect(
        _GPT_OSS,
        exit_code=0,
        counts={"openrouter/openai/gpt-oss-20b": _CCOT_NO_GRADES},
        why="the matching baseline: 10 of 2970, completed, unscored",
    ),
    _inspect(
        _SONNET_37,
        _GPT_OSS,
        exit_code=0,
        counts={
            "anthropic/claude-3-7-sonnet-20250219": _CCOT_NO_GRADES,
            "openrouter/openai/gpt-oss-20b": _CCOT_NO_GRADES,
        },
        why="SOURCES allows 'refused/flagged': both headers plan all 2970 sample_ids, so against the exports' "
        "own plan no id is unknown; units are joined by id, each candidate shows 2960 missing. The 9 unknown ids "
        "refuse against the other models' 10-id plan (unknown_case; tested in test_inspect_ai, --from takes no plan)",
    ),
    _inspect(
        _EE + "/data_pubmedqa_gpt4o_mini.json",
        exit_code=0,
        counts={"openai/azure/gpt-4o-mini": {"planned": 2, "attempted": 2, "scored": 2, "passed": 2, "missing": 0}},
        notes=frozenset({"limited_run"}),
        why="digit-string ids, 2 of 500 samples, 2 C",
    ),
    _inspect(
        _EE + "/data_cyse2_vuln_exploit_challenges.json",
        exit_code=1,
        refusal_kinds=frozenset({"invalid_grade"}),
        why="a fractional score (0.65) is not a binary grade",
    ),
    _inspect(
        _EE + "/data_cyse2_vuln_exploit_challenges.json",
        args=("--grade", "numeric"),
        exit_code=0,
        counts={
            "mistral/mistral-large-latest": {"planned": 4, "attempted": 1, "completed": 1, "scored": 1, "missing": 3}
        },
        notes=frozenset({"id_normalised"}),
        why="1 case x 4 epochs planned, only epoch 1 present; header id '1' and sample id 1 are one case",
    ),
    # --- third collection ---
    _inspect(
        _ZSTD_LEGACY,
        exit_code=0,
        counts={"mockllm/test": _ZSTD_RUN},
        why="zstd (zip method 93) members; 2 model-call retries inside the sample are not attempts",
    ),
    _inspect(
        _ZSTD_POSTFIX,
        exit_code=0,
        counts={"mockllm/fake": _ZSTD_RUN},
        why="zstd members; ModelEvents attempt 1..3 inside one sample",
    ),
    _inspect(
        _EVAL_SET,
        exit_code=0,
        counts={"openai/gpt-5": {"planned": 1, "attempted": 1, "scored": 1, "passed": 0}},
        notes=frozenset({"limited_run"}),
        why="an eval-set folder: eval-set.json, logs.json and .eval-set-id are skipped; --limit 1 of 100",
    ),
    _inspect(
        _TOOL_CALL_ERROR,
        exit_code=1,
        refusal_kinds=frozenset({"trial_out_of_range"}),
        why="epoch 4 in a 1-epoch plan (eval.config {} and sample_ids [1]): refused, because the plan is what the "
        "header declares and results.total_samples = 4 is a header total, never evidence; planning 4 epochs "
        "would take the plan from the row",
    ),
    _inspect(
        _SECURITY_JSON,
        exit_code=0,
        counts={_GPT4O_MINI: {"planned": 3, "attempted": 3, "scored": 3, "passed": 3, "missing": 0}},
        notes=frozenset({"limited_run"}),
        why="3 of 16 samples, all C",
    ),
    _inspect(
        _SECURITY_JSON,
        _SCOUT_SECURITY,
        exit_code=0,
        counts={
            _GPT4O_MINI: {"planned": 16, "attempted": 16, "completed": 16, "scored": 16, "passed": 11, "missing": 0}
        },
        why="two runs of one task and model: ids 1-3 have two attempts (May, then September; C in both), "
        "different samples (uuids), so no duplicate_import",
    ),
    _inspect(
        _EE + "/data_with_llm_scoring.json",
        exit_code=0,
        counts={"anthropic/claude-opus-4-6": {"planned": 1000, "attempted": 0, "missing": 1000, "scored": 0}},
        notes=frozenset({"header_rows_disagree"}),
        why="samples stripped: 1000 planned, none attempted, never the header's 0.431",
    ),
]

"""Real promptfoo exports and their exact outcomes (numbers from SOURCES.md)."""

from tests.importers.real_table import Case

_SAMPLE = "promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"
_WORKBENCH = "promptfoo/krystianbergmann-prompt-eval-workbench/promptfoo-results.json"
_DRIFT = "promptfoo/reDreamAI-measure-ai-drift/promptfoo-results.json"
_DIALOGUE = "promptfoo/reDreamAI-measure-ai-drift/promptfoo-dialogue-results.json"
_SMOKE = "promptfoo/michaelheckmann-promptfoo-nextjs-viewer/experiments/results/smoke.json"
_EMPTY = "promptfoo/AlekseyF7-LLM_Security_Range/promptfoo-results.json"

_DRIFT_PROVIDER = "openai:chat:arcee-ai/trinity-large-preview:free"
#: The two prompt columns (tasks) of the drift run; their multi-KB labels are cut to 60 characters.
_DRIFT_PROMPTS = (
    "prompts/patient_test_prompt.txt: The therapist has just said…",
    "prompts/patient_test_prompt.txt: You are a therapy patient i…",
)
_ALL_FAILED = {"planned": 2, "attempted": 2, "completed": 2, "scored": 2, "passed": 0, "missing": 0, "exec_failed": 0}
_HALF = {"planned": 2, "attempted": 2, "completed": 2, "scored": 2, "passed": 1, "missing": 0, "exec_failed": 0}
_ALL_ERRORS = {"planned": 8, "attempted": 8, "completed": 0, "scored": 0, "passed": 0, "exec_failed": 8}

CASES: list[Case] = [
    Case(
        "promptfoo",
        (_SAMPLE,),
        0,
        {"openai:gpt-5": _ALL_FAILED, "openai:gpt-5-mini": _ALL_FAILED},
        why="2 providers x 2 tests, every row success false with failureReason 1: the binary grade from success "
        "is the default; the latency message in `error` is not an execution error",
    ),
    Case(
        "promptfoo",
        (_SAMPLE,),
        0,
        {"openai:gpt-5": {**_ALL_FAILED, "passed": None}, "openai:gpt-5-mini": {**_ALL_FAILED, "passed": None}},
        args=("--grade", "numeric", "--score", "score"),
        why="the weighted score under --grade numeric: a number passes only against --pass-threshold, so passed "
        "is null (success is the binary reading)",
    ),
    Case(
        "promptfoo",
        (_WORKBENCH,),
        0,
        {
            "openai:chat:gpt-4o-mini": {
                "planned": 3,
                "attempted": 3,
                "completed": 3,
                "scored": 3,
                "passed": 2,
                "missing": 0,
                "exec_failed": 0,
            }
        },
        why="failureReason 1,0,0 = stats successes 2, failures 1; the provider label is '' so the candidate is its id",
    ),
    Case(
        "promptfoo",
        (_DRIFT,),
        0,
        {(p, _DRIFT_PROVIDER): _ALL_ERRORS for p in _DRIFT_PROMPTS},
        why="all 16 rows failureReason 2: 2 prompts (tasks) x 1 provider x 8 cases, every one an execution error",
    ),
    Case(
        "promptfoo",
        (_DIALOGUE,),
        0,
        {
            "python:prompts/dialogue_provider.py": {
                "planned": 6,
                "attempted": 1,
                "completed": 1,
                "scored": 1,
                "passed": 0,
                "missing": 5,
                "exec_failed": 0,
            }
        },
        notes=frozenset({"missing_unit"}),
        why="config declares 6 tests, 1 ran: success false (weighted score 0.909, 10 of 11 assertions)",
    ),
    Case(
        "promptfoo",
        (_DIALOGUE,),
        1,
        args=("--score", "NoRoleConfuson"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="a mistyped named metric refuses, naming the metrics the export has",
    ),
    Case(
        "promptfoo",
        (_SMOKE,),
        0,
        {
            ("Say {{ var1 }} in German", "openai:gpt-3.5-turbo"): _HALF,
            ("Translate {{ var1 }} to German", "openai:gpt-3.5-turbo"): _HALF,
        },
        why="format version 2: the two prompts of one provider are two tasks, cases come from vars; 2 success, 2 fail",
    ),
    Case(
        "promptfoo",
        (_EMPTY,),
        1,
        refusal_kinds=frozenset({"empty_plan", "empty_candidates"}),
        why="a 52-byte placeholder with no rows, config or prompts: nothing is planned, so it refuses "
        "(SOURCES allows reporting 0 units; a refusal is never mistaken for a clean run)",
    ),
]

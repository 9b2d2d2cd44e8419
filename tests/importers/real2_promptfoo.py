"""Real promptfoo exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case, funnel

_NICHE = "promptfoo/tthatcher95-nicheIQ/promptfoo/results.json"
_TDS = "promptfoo/dewanggandhi01-TDS-Project-1/promptfoo_results.json"
_NAKSU = "promptfoo/codenjosh-naksu-chatbot/results/promptfoo-results.json"
_VOYAGE = "promptfoo/SuhaasNv-VoyageAI-v1/promptfoo-results.json"
_REQVERIFY = "promptfoo/mspworld-reqverify/promptfoo/results.json"
_QA_DEMO = "promptfoo/Wadys-ai-qa-demo/promptfoo/results.json"

#: nicheIQ's prompt columns (labels) and the tests scoped to each: tests 0-3 name pain_v1/pain_v2, 4-6
#: ideas_v1/ideas_v2, 7 ideas_v2 (config prompt ids; the export's columns carry the labels).
_NICHE_PROMPTS = {
    "Pain Scorer v1 (word anchors)": 4,
    "Pain Scorer v2 (dollar-band rubric)": 4,
    "Product Ideas v1 (current)": 3,
    "Product Ideas v2 (anti-patterns + validation Q)": 4,
}
#: Rows per column holding a javascript assertion that threw (tests 0-2 on pain, 4 on ideas, 7 on ideas_v2).
_NICHE_THREW = {
    "Pain Scorer v1 (word anchors)": 3,
    "Pain Scorer v2 (dollar-band rubric)": 3,
    "Product Ideas v1 (current)": 1,
    "Product Ideas v2 (anti-patterns + validation Q)": 2,
}
_NICHE_PROVIDERS = ("gpt-4o-mini", "gpt-4o")


CASES: list[Case] = [
    Case(
        "promptfoo",
        (_NICHE,),
        0,
        {(label, p): funnel(n, 0) for p in _NICHE_PROVIDERS for label, n in _NICHE_PROMPTS.items()},
        why="tests scoped to prompts with the test-level prompts field are planned only on the prompts they name: "
        "2 providers x (4 + 4 + 3 + 4) = 30 planned units, the 30 rows, none missing (not 2 x 4 x 8 = 64). "
        "All 30 fail (failureReason 1). 16 rows name a javascript assertion that threw as their error (18 hold "
        "one): promptfoo records the throw as a failed assertion with score 0, which judged nothing, but in "
        "every one of these rows another assertion (regex, is-json or llm-rubric) gave a valid fail, and a test "
        "passes only when every assertion passes: the fail stands, so they are wrong answers, not grader failures",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_NICHE,),
        0,
        {
            (label, p): {
                "planned": n,
                "scored": n - _NICHE_THREW[label],
                "judge_failed": _NICHE_THREW[label],
                "missing": 0,
            }
            for p in _NICHE_PROVIDERS
            for label, n in _NICHE_PROMPTS.items()
        },
        args=("--score", "score", "--grade", "numeric"),
        notes=frozenset({"grader_error"}),
        why="the weighted score averages the 0 of an assertion that threw: no valid score, so the 18 rows that "
        "hold one are grader failures under --score score (12 scored)",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_TDS,),
        0,
        {
            "https://tds-project-1-ruby-one.vercel.app/query": funnel(5, 3),
            "openai:chat:gpt-4o-mini": funnel(5, 4),
        },
        notes=frozenset({"plan_from_rows"}),
        why="version 3, providers without a label (label '') are named by their id; 2 x 5 tests, 3 and 4 pass, "
        "the fails are failureReason 1. Test 0's image variable is a file:// reference whose loaded content the "
        "rows hold, so the config's expansion cannot be checked against the rows: the plan is the 5 tests seen, "
        "flagged plan_from_rows",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_NAKSU,),
        0,
        {
            "Naksu Gemini": {
                "planned": 3,
                "attempted": 3,
                "completed": 0,
                "scored": 0,
                "passed": 0,
                "missing": 0,
                "exec_failed": 3,
                "judge_failed": 0,
                "not_scored": 0,
            }
        },
        why="every row failureReason 2 (the python worker never became ready): 3 execution failures, not fails",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_VOYAGE,),
        0,
        {"Planner API": funnel(39, 39), "Research API": funnel(39, 39)},
        why="two http providers whose config id is 'https' for both: promptfoo keys a provider by its label, so "
        "they are two candidates (Planner API, Research API), never merged; 2 x 39 tests, all pass",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_REQVERIFY,),
        0,
        {"reqverify-generate": funnel(3, 3)},
        notes=frozenset({"plan_from_rows"}),
        why="config.tests is a file reference (manual_smoke_tests.yaml) the export does not hold: the plan is the "
        "3 tests seen in the rows, flagged plan_from_rows (a test no row ran could not be seen as missing)",
        collection="real2",
    ),
    Case(
        "promptfoo",
        (_QA_DEMO,),
        0,
        {
            ("Translate to Spanish: Hello world", "ollama:completion:llama3"): funnel(1, 0),
            ("Summarize: The quick brown fox jumps over the lazy dog", "ollama:completion:llama3"): funnel(1, 0),
        },
        why="1 test x 2 prompts of one provider: each prompt is a task, the provider the candidate; both fail "
        "(failureReason 1)",
        collection="real2",
    ),
]

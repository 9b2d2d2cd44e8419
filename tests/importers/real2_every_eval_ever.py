"""Real every_eval_ever exports of the second collection and their exact outcomes (recounted from the files).

Paths are relative to ``../shared/data/real2`` (see its SOURCES.md).
"""

from tests.importers.real_table import Case

_PR30 = "every_eval_ever/evaleval-every_eval_ever-PR30"
_RECORD = f"{_PR30}/data/pubmed_qa/openai/gpt-4o-mini-2024-07-18/497ca8f5-8e80-436b-9abd-297501f18497.json"
_ROWS = (
    f"{_PR30}/instance_level_data/"
    "pubmed_qa_openai_azure_gpt-4o-mini-2024-07-18_6956fc23-6adf-4539-90ea-caf6b5fec1d5.Format.jsonl"
)
_MODEL = "openai/gpt-4o-mini-2024-07-18"
_CLEAN = {"attempted": 2, "completed": 2, "missing": 0, "exec_failed": 0, "judge_failed": 0, "not_scored": 0}

CASES: list[Case] = [
    Case(
        "every-eval-ever",
        (_RECORD,),
        0,
        {_MODEL: {"planned": 2, "scored": 2, "passed": 2, **_CLEAN}},
        notes=frozenset({"limited_run", "header_rows_disagree"}),
        why="schema 0.2.0 record: samples_number 500 but sample_ids lists 2, and the instance file holds those 2 "
        "rows (is_correct true). The plan is what the run was set to run (the session's limit decision): the 2 "
        "listed ids, with a limited_run note naming 2 of 500; the rows' evaluation_id is not the record's "
        "(header_rows_disagree). The instance file is found from file_path, relative to the repository root",
        collection="real2",
    ),
    Case(
        "every-eval-ever",
        (_PR30,),
        0,
        {_MODEL: {"planned": 2, "scored": 2, "passed": 2, **_CLEAN}},
        notes=frozenset({"limited_run"}),
        why="the folder: the record and its instance file (named by file_path) are read once, the same 2 units",
        collection="real2",
    ),
    Case(
        "every-eval-ever",
        (_RECORD,),
        0,
        {_MODEL: {"planned": 2, "scored": 2, "passed": None}},
        args=("--grade", "numeric"),
        why="evaluation.score 1.0 on both rows under --grade numeric: no threshold, so nothing passes or fails "
        "(is_correct is the binary reading)",
        collection="real2",
    ),
    Case(
        "every-eval-ever",
        (_RECORD,),
        0,
        {_MODEL: {"planned": 2, "scored": 2, "passed": 2}},
        args=("--grade", "numeric", "--pass-threshold", "1"),
        why="both scores 1.0 reach the declared threshold 1",
        collection="real2",
    ),
    Case(
        "every-eval-ever",
        (_ROWS,),
        0,
        {_MODEL: {"planned": 2, "scored": 2, "passed": 2, **_CLEAN}},
        notes=frozenset({"plan_from_rows"}),
        why="the instance file alone: the candidate is the rows' model_id and the plan their 2 sample ids",
        collection="real2",
    ),
    Case(
        "every-eval-ever",
        (_RECORD,),
        1,
        args=("--score", "choice"),
        refusal_kinds=frozenset({"unknown_score"}),
        why="'choice' is the record's evaluation_name, not a grade of the rows: refuse, naming is_correct and score",
        collection="real2",
    ),
]

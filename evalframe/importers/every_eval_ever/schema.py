"""The every_eval_ever schema facts evalframe reads and writes: grades, evalframe's metadata keys, versions."""

from __future__ import annotations

from typing import Final

import polars as pl

from evalframe.columns import CASE_HASH
from evalframe.importers import LEDGER_SCHEMA

#: The grades an instance row carries, in the order tried when none is declared.
GRADES: Final = ("is_correct", "score")
#: Metadata keys of rows evalframe writes (values are strings, as the schema requires).
META_TRIAL: Final = "evalframe.trial"
META_EXEC: Final = "evalframe.exec_status"
META_SCORE: Final = "evalframe.score_status"
META_OUTPUT: Final = "evalframe.has_output"
#: ``source_data.additional_details`` key of the planned trials in records evalframe writes.
DETAIL_TRIALS: Final = "evalframe.trials"
#: The outcomes of units without a valid grade: evalframe writes no instance row for them (the schema
#: makes every row a score and an ``is_correct``, so any row would read as a wrong answer).
UNGRADED: Final = ("missing", "not_started", "exec_failed", "no_output", "judge_failed", "not_scored")
#: ``detailed_evaluation_results.additional_details`` keys of records evalframe writes: what the rows are,
#: the units left out per outcome (``evalframe.left_out.<outcome>``, a count) and the ungraded units that
#: ran or were skipped (JSON text: a list of objects with ``sample_id``, ``trial``, ``outcome``,
#: ``exec_status``, ``score_status`` and ``has_output``; missing units are the planned ones with neither).
DETAIL_ROWS: Final = "evalframe.rows"
DETAIL_LEFT_OUT: Final = "evalframe.left_out"
DETAIL_UNGRADED: Final = "evalframe.ungraded_units"
#: The schema version :func:`write` writes (records of 0.2.x and 0.3.0 are read alike).
SCHEMA_VERSION: Final = "0.3.0"
#: The folder schema 0.3.0 roots ``detailed_evaluation_results.file_path`` in: records and instance files
#: are written as ``data/<benchmark>/<developer>/<model>/<uuid>.json`` and ``…/<uuid>_samples.jsonl``.
DATASTORE: Final = "data"
#: ``model_info.additional_details`` of the records evalframe writes: schema 0.3.0 requires the model's
#: deployment type and availability, which an audit does not know.
MODEL_DETAILS: Final = {"deployment_type": "unknown", "model_availability": "unknown"}
#: Ledger columns of this importer: the common ones plus ``case_hash``.
SCHEMA: Final = pl.Schema([*LEDGER_SCHEMA.items(), (CASE_HASH, pl.String)])

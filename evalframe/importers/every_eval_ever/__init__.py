"""Read and write every_eval_ever records (EvalEval's shared schema for published evaluation results).

Format
------
An every_eval_ever evaluation is an **aggregate record** (one JSON document,
``eval.schema.json``, schema 0.2.x; 0.3.0 records read the same way) and,
optionally, an **instance-level file** it points to (JSON Lines,
``instance_level_eval.schema.json``, one row per sample). Both schemas are
published in evaleval/every_eval_ever (``every_eval_ever/schemas/``). The
fields read:

* aggregate: ``model_info.id`` (the model), ``evaluation_id``,
  ``evaluation_results[]`` with ``evaluation_name``,
  ``source_data.{dataset_name, samples_number, sample_ids}`` and
  ``score_details.{score, uncertainty.num_samples}``, and
  ``detailed_evaluation_results.{file_path, checksum, hash_algorithm,
  total_rows}``;
* instance row: ``model_id``, ``evaluation_id``, ``evaluation_name``,
  ``sample_id``, ``sample_hash``, ``evaluation.{score, is_correct,
  num_turns}``, ``error``, ``output``/``messages``/``interactions`` and
  ``metadata``.

How it maps onto evalframe
--------------------------
* **candidate**: the record's ``model_info.id`` (an instance file read
  without its record: the rows' ``model_id``);
* **plan**: the record's ``sample_ids`` (the union over its
  ``evaluation_results``) × trials. A record without ``sample_ids`` plans the
  sample ids of its rows, with a ``plan_from_rows`` note; a record with
  neither ids nor rows is no evidence at all and refuses (``empty_plan``),
  whatever its scores say. ``samples_number`` above the ids listed is a
  ``limited_run`` note (the run covered a subset of the dataset);
* **case_id**: the ``sample_id`` as a string (``1`` and ``"1"`` are one
  case, with an ``id_normalised`` note when both spellings occur). Every case
  carries a ``task`` plan column (``source_data.dataset_name``, else the
  rows' ``evaluation_name``); when records of several tasks are read
  together, case ids are ``<task>/<sample_id>``;
* **case_hash**: the row's ``sample_hash`` (the hash of input and
  reference), also planned per case from the first row that carries it, so
  a row of another candidate whose sample has the same id but other content
  refuses (``hash_mismatch``);
* **trial / attempt**: the schema has neither, so every row is trial 1,
  attempt 1, except in records evalframe wrote (see below), whose rows carry
  ``metadata["evalframe.trial"]`` (and ``["evalframe.has_output"]``, since
  evalframe does not keep the output text) and whose sources carry
  ``source_data.additional_details["evalframe.trials"]``;
* **status**: a row with an ``error`` (a non-empty string or any other
  non-null value) is an execution failure (``exec_status = error``), its
  grade ignored: the schema makes every row carry a score, so an errored
  row's score is not evidence of a wrong answer. Rows evalframe wrote say
  their statuses in ``metadata["evalframe.exec_status"]`` and
  ``["evalframe.score_status"]``, which are read as written, and their
  records list the units without a row that ran or were skipped
  (``detailed_evaluation_results.additional_details["evalframe.ungraded_units"]``):
  each is one ledger row with its statuses, the record as its source and
  no line;
* **grade** (``score``): ``is_correct`` (the default: ``passed`` is the
  verdict and ``score`` 1 or 0) or ``score`` (``evaluation.score``, with
  ``passed`` from ``is_correct``; audit it with ``--grade numeric``, which
  drops that verdict: only ``--pass-threshold`` makes a number a pass). A
  grade value that is not a score (null, text, NaN) is a grader failure
  (:func:`~evalframe.importers._kit.grade`); a row without the grade is
  ``not_scored``;
* **limit**: a row whose ``num_turns`` reached the record's
  ``eval_limits.message_limit`` has ``limit = "message=<N>"``.

The instance file is found from the record's ``file_path``, relative to the
record's folder or any folder above it (publishers write it relative to their
repository root); its rows are read once even when the file is also given.
An instance file given without a record is read on its own. Header numbers
are never evidence: a ``header_rows_disagree`` note says when ``total_rows``,
the checksum, ``uncertainty.num_samples``, the ``evaluation_id`` or the score
of the record disagree with its rows (the score is compared with the mean
grade of the rows for the record's only result, or for the result named as
the rows' ``evaluation_name``).

Writing
-------
:func:`write` publishes an audit in schema 0.3.0 with its honest
denominators: per candidate one record
``data/<benchmark>/<developer>/<model>/<uuid>.json`` (the layout 0.3.0
requires of ``file_path``; ``model_info.additional_details`` says the
deployment type and availability are ``unknown``, which an audit cannot know) whose results
are ``pass_rate_scored`` (passed / scored, ``num_samples`` = scored),
``pass_rate_planned`` and ``scored_coverage`` (``num_samples`` = planned),
each with the audit's interval clustered by case (``confidence_interval``),
the clustered standard error and the funnel counts, design effect and
effective sample size in ``score_details.details``; and an instance file
``…/<uuid>_samples.jsonl`` beside it with one row per **scored** unit. The schema
makes every row carry a numeric ``score`` and a boolean ``is_correct``, so a
row for a unit without a valid grade would be read as a wrong answer by any
tool that averages them: such units (outcomes ``missing``, ``not_started``,
``exec_failed``, ``no_output``, ``judge_failed``, ``not_scored``) have no row.
The record's ``detailed_evaluation_results.additional_details`` says so
(``evalframe.rows``), counts them per outcome (``evalframe.left_out`` and
``evalframe.left_out.<outcome>``) and lists those that ran or were skipped
with their statuses (``evalframe.ungraded_units``, JSON text); the missing
ones are the planned units (``sample_ids`` × trials) in neither. Reading the
folder back restores the listed units from the record, so the funnel counts
are the same.

Modules
-------
The import follows the data, one job per module:

* ``schema``: the schema facts read and written;
* ``records``: aggregate records (checked), instance files and rows;
* ``grading``: instance rows graded; a record's header numbers checked;
* ``reader``: :func:`read`;
* ``writer``: :func:`write`.
"""

from evalframe.importers.every_eval_ever.reader import read
from evalframe.importers.every_eval_ever.schema import (
    DETAIL_LEFT_OUT,
    DETAIL_ROWS,
    DETAIL_TRIALS,
    DETAIL_UNGRADED,
    GRADES,
    META_EXEC,
    META_OUTPUT,
    META_SCORE,
    META_TRIAL,
    SCHEMA,
    SCHEMA_VERSION,
    UNGRADED,
)
from evalframe.importers.every_eval_ever.writer import ExportError, left_out, write

__all__ = [
    "DETAIL_LEFT_OUT",
    "DETAIL_ROWS",
    "DETAIL_TRIALS",
    "DETAIL_UNGRADED",
    "GRADES",
    "META_EXEC",
    "META_OUTPUT",
    "META_SCORE",
    "META_TRIAL",
    "SCHEMA",
    "SCHEMA_VERSION",
    "UNGRADED",
    "ExportError",
    "left_out",
    "read",
    "write",
]

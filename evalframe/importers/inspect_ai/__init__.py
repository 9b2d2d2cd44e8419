"""Import Inspect AI eval logs (``.eval`` archives, ``.json`` logs, eval-set folders) as a plan and a ledger.

Format
------
The schema is the pydantic ``EvalLog`` model and its parts (``EvalSpec``,
``EvalDataset``, ``EvalConfig``, ``EvalResults``, ``EvalSample``,
``EvalSampleLimit``, ``EvalRetryError``) in ``src/inspect_ai/log/_log.py`` of
UKGovernmentBEIS/inspect_ai; user documentation at
https://inspect.aisi.org.uk/eval-logs.html.

* A ``.eval`` file is a zip archive: ``header.json`` (the log without its
  samples), one ``samples/<id>_epoch_<n>.json`` per sample, and a journal
  (``_journal/start.json`` …). A run that was interrupted may have no
  ``header.json``; the eval spec is then read from ``_journal/start.json`` and
  the run status is taken to be ``started``. Members are deflate-compressed
  (Inspect before 0.3.206) or **zstd-compressed** (zip method 93, Inspect's
  default since 0.3.206), which Python's ``zipfile`` (before 3.14) cannot
  read: those are decompressed with the ``zstandard`` package. Whatever a
  member declares, no member is decompressed beyond ``Limits.member_bytes``
  (default :data:`MAX_MEMBER_BYTES`, ``--max-member-bytes``; a larger one
  is an ``unreadable_file``), no archive beyond ``Limits.archive_bytes`` in
  all (an input error), and a member whose decompressed
  bytes do not match its recorded CRC-32 and size is unreadable.
* A ``.json`` file is one ``EvalLog`` document with a ``samples`` array.
* An **eval-set folder** (``inspect eval-set --log-dir DIR``) holds the logs
  of its tasks beside ``eval-set.json`` (the set's manifest),
  ``logs.json`` (an index of the logs' headers) and ``.eval-set-id``; these
  three are not logs and are skipped, found in a folder or named directly.

How the export becomes a plan
-----------------------------
The plan is what the header says was *planned*: ``eval.dataset.sample_ids`` ×
trials ``1..eval.config.epochs`` (default 1) for the candidate
``eval.model``. A run limited with ``--limit`` (or ``--sample-id``) plans
only the samples it lists (the plan is what the run was set to run): the ids
of the dataset's other samples are not in the log, so they cannot be
planned; a ``limited_run`` note then names the limit and the dataset's size
("--limit 2: 2 of 100 samples planned; the rates describe those 2, not the
task"). Logs
without ``sample_ids`` fall back to the sample ids present in the rows, with
a ``plan_from_rows`` note. Several logs combine into one plan (the union of
their units per candidate); when candidates have different units the plan
is an explicit units table. Every case carries a ``task`` plan column (the
log's ``eval.task``) that can be used as a slice.

Case ids are the sample ids as strings: ``1`` and ``"1"`` are the same case
(the one id normalisation), with an ``id_normalised`` note when both
spellings occur for one task. When the logs read together cover more than
one task, case ids are prefixed with the task name (``<task>/<id>``, e.g.
``inspect_evals/arc_easy/3``) so that sample 1 of one task is not sample 1
of another.

How samples become ledger rows
------------------------------
One row per attempt. The sample's ``error_retries`` (earlier failed attempts
of the same sample inside one log) become attempts ``1..k`` with
``exec_status = error``; the sample itself is the last attempt. Retries of a
model call *inside* a sample (ModelEvents with ``attempt``/``retries``) are
not attempts of the unit. Logs of the same (task, model) whose recorded
settings agree, such as the logs of a retried eval set, are successive runs:
their attempts of a unit are
numbered on, in the order of the log's start time (``stats.started_at``,
else ``eval.created``; then ``eval.created``, then path), so the audit's
declared retry policy decides which one counts. A sample seen twice (the
same ``uuid``, or for logs without uuids the same sample content: a log
copied, or a completed sample an eval-set retry carried into its new log) is
one attempt imported twice: it is read once, from the earliest log, with a
``duplicate_import`` note. ``run_id`` is the log's ``eval.run_id``
(``eval.eval_id`` when absent).

Runs of one task and model whose recorded settings differ (``eval.task_args``,
``eval.model_args``, the generate config, the solver plan, the scorers'
options, the dataset, the per-sample limits; see ``settings``) measured
different things: they are different candidates, never retries of one
another, named with the settings that set them apart
(``anthropic/claude-opus-4-20250514 [with_background=true]``), and a
``settings_differ`` note (a flag) names every differing key, its values and
the files. A setting one log records and another does not is ``unknown``, not
assumed equal (SPEC §6c).

Grades (the chosen scorer's ``value``, read by the toolkit's one grade
meaning): ``C`` → 1 and ``I`` → 0 (binary); ``P`` (partial credit) → 0.5 and
``N`` (no answer) → 0, the values Inspect's own ``value_to_float`` gives them;
booleans → 1/0; numbers → the number. A null or absent value, a non-finite
number, or a value that is not a score (other text, a list, a dict) is a
``judge_error``. A sample without the chosen scorer (or with no scores at
all: no scorer ran) is ``not_scored``. A sample has an output when its
``output`` has a choice or a completion, or its ``messages`` or model-call
``events`` hold an assistant message with content (a step-by-step solver such
as scicode's leaves ``output.choices`` empty while its model calls answered);
a graded sample always has one. A sample with an ``error`` is
``exec_status = error`` and never scored. A sample halted by a ``limit`` is
still ``completed`` (and may be scored); the limit is kept in the ``limit``
column as ``<type>=<value>``.

The score: Inspect's score value may be a dict (a control-arena ``scorer``
gives ``{main_task_success: true, side_task_success: false}``, scicode's
``scicode_scorer`` ``{"Problem Correctness": 1, "Total Correct": 3, ...}``);
its metrics are then computed per key and the header's ``results.scores``
lists each key as a score ``name`` of that ``scorer``. A score is a scorer's
value, or a key inside a scorer's dict value (read by the toolkit's one grade
meaning: booleans 1/0). ``--score NAME`` must name a score of every log read
(else the import refuses with ``unknown_score`` naming the scorers and keys
each log has). With none declared, a log's score is the first one its header
lists (``results.scores``, else ``eval.scorers`` with the keys of their
per-key metrics); a log whose header lists none but whose samples carry
several scorers refuses with ``ambiguous_score``, as does a scorer whose every
value is a dict, chosen by default or by its own name (the note names the keys
to pass to ``--score``). A score the header names must be found in the
samples: when samples hold scores but none holds this one, the import refuses
(``unknown_score``, naming where it looked and what the samples hold), never
an audit of not-scored units. A log with no scorer at all (its samples hold no
score) leaves every unit ``not_scored``.

Header totals (``results.total_samples``/``completed_samples``) are never
evidence: when they disagree with the rows a ``header_rows_disagree`` note
says so; a run whose ``status`` is not ``success`` gets a ``run_status`` note.
Every note about one log carries its ``candidate`` and its detail opens with
the model and task (``openai/gpt-4o (mmlu_0_shot): ...``).

Modules
-------
The import follows the data, one job per module:

* ``log``: the log and sample records, their identity checks, ``.json`` logs;
* ``archive``: ``.eval`` archives (zip, deflate or zstd) within the member and archive limits;
* ``header``: header facts: start time, epochs, planned ids, the scorer, run notes, info;
* ``settings``: the settings a log records, and runs split into candidates when they differ;
* ``rows``: ledger rows: attempts from error retries, grades, limits, duplicate imports;
* ``reader``: :func:`read`: logs read, units planned, rows assembled.
"""

from evalframe.importers.inspect_ai.archive import MAX_MEMBER_BYTES
from evalframe.importers.inspect_ai.log import TASK
from evalframe.importers.inspect_ai.reader import read

__all__ = ["MAX_MEMBER_BYTES", "TASK", "read"]

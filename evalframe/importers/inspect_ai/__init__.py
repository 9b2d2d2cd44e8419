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
only the samples it lists: the ids of the dataset's other samples are not in
the log, so they cannot be planned; a ``limited_run`` note then says "the
run was limited to N of M samples" (M = ``eval.dataset.samples``). Logs
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
not attempts of the unit. Logs of the same (task, model), such as the logs
of a retried eval set, are successive runs: their attempts of a unit are
numbered on, in the order of the log's start time (``stats.started_at``,
else ``eval.created``; then ``eval.created``, then path), so the audit's
declared retry policy decides which one counts. A sample seen twice (the
same ``uuid``, or for logs without uuids the same sample content: a log
copied, or a completed sample an eval-set retry carried into its new log) is
one attempt imported twice: it is read once, from the earliest log, with a
``duplicate_import`` note. ``run_id`` is the log's ``eval.run_id``
(``eval.eval_id`` when absent).

Grades (the chosen scorer's ``value``, read by the toolkit's one grade
meaning): ``C`` → 1 and ``I`` → 0 (binary); ``P`` (partial credit) → 0.5 and
``N`` (no answer) → 0, the values Inspect's own ``value_to_float`` gives them;
booleans → 1/0; numbers → the number. A null or absent value, a non-finite
number, or a value that is not a score (other text, a list, a dict) is a
``judge_error``. A sample without the chosen scorer (or with no scores at
all: no scorer ran) is ``not_scored``. A sample with an ``error`` is
``exec_status = error`` and never scored. A sample halted by a ``limit`` is
still ``completed`` (and may be scored); the limit is kept in the ``limit``
column as ``<type>=<value>``.

The scorer: ``--score NAME`` must be a scorer of every log read (else the
import refuses with ``unknown_score`` naming the scorers each log has). With
none declared, a log's scorer is the first one its header lists
(``results.scores``, else ``eval.scorers``); a log whose header lists none
but whose samples carry several refuses with ``ambiguous_score``; a log with
no scorer at all leaves every unit ``not_scored``.

Header totals (``results.total_samples``/``completed_samples``) are never
evidence: when they disagree with the rows a ``header_rows_disagree`` note
says so; a run whose ``status`` is not ``success`` gets a ``run_status`` note.

Modules
-------
The import follows the data, one job per module:

* ``log``: the log and sample records, their identity checks, ``.json`` logs;
* ``archive``: ``.eval`` archives (zip, deflate or zstd) within the member and archive limits;
* ``header``: header facts: start time, epochs, planned ids, the scorer, run notes, info;
* ``rows``: ledger rows: attempts from error retries, grades, limits, duplicate imports;
* ``reader``: :func:`read`: logs read, units planned, rows assembled.
"""

from evalframe.importers.inspect_ai.archive import MAX_MEMBER_BYTES
from evalframe.importers.inspect_ai.log import TASK
from evalframe.importers.inspect_ai.reader import read

__all__ = ["MAX_MEMBER_BYTES", "TASK", "read"]

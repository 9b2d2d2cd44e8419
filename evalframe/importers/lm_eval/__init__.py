"""Import EleutherAI lm-evaluation-harness output (``--output_path … --log_samples``).

One lm-eval run writes a results file (aggregate metrics per task keyed
``"<metric>,<filter>"``, ``n-samples``, ``config``, versions) and, per task,
``samples_<task>_<timestamp>.jsonl`` (one JSON object per evaluated document
and filter). Given a folder, lm-eval writes ``<folder>/<org>__<model>/results_<timestamp>.json``;
given ``--output_path x.json`` it writes ``x_<timestamp>.json`` with the
samples files beside it. Older writers named the samples file ``.json``
although it is JSON Lines; both are read the same way. A samples file is
linked to the results file in its folder with the same timestamp suffix.
There is no formal schema: the layout is described in ``docs/interface.md``
(``--output_path``, ``--log_samples``) of EleutherAI/lm-evaluation-harness.

How an export becomes a plan and a ledger:

* **candidate**: the model the results file records, as lm-eval wrote it:
  ``config.model_args`` ``pretrained=`` (else ``model=``, ``model_name=``,
  ``engine=``, ``path=``), else ``model_name``, else ``config.model_name``.
  A local path such as ``/gpfs/…/FLOR-760M`` is kept whole (it is the only
  name the run recorded). Never the folder name: the result does not depend
  on how a path is typed. Samples rows carry no model, so a samples file
  without a results file (or a results file that records no model) is read
  as candidate :data:`UNKNOWN_MODEL`, said in a ``plan_from_rows`` note.
* **run_id**: the timestamp. Re-runs of a task for one candidate are attempts
  1, 2, … of the same units, numbered in timestamp order, when their results
  files record the same settings for the task (model arguments, generation
  and few-shot settings, seeds, task version and config; not batching,
  device or ``--limit``). Runs whose settings differ, or where one does not
  record a setting the other does, are different candidates named with the
  differing settings (``m [num_fewshot=5]``), said in a ``settings_differ`` note.
* **filter**: a task with several answer-extraction filters writes one row per
  document *per filter*; one filter is graded. ``--score <metric>,<filter>``
  (lm-eval's own key, e.g. ``exact_match,strict-match``) selects it; with
  several filters and none declared the import refuses (``ambiguous_rows``,
  naming the filters). A task with one filter needs no declaration.
* **case_id**: ``<task>/<doc_id>``; one trial; plan columns ``task`` and
  ``filter`` (the graded filter; ``none`` for older rows without one).
* **plan**: what the run was set to run: doc ids ``0 … n-samples.effective − 1``
  of every task read (lm-eval's ``--limit N`` runs the first N documents, a
  fraction below 1 that share rounded up; ``effective`` records how many), and
  a ``limited_run`` note names the limit and the task's full size
  (``n-samples.original``). A row outside them is an unknown case. The tasks planned are those of the samples files
  read plus, for a results file given directly (or found in a given folder),
  every task of its ``n-samples``. Without a results file the plan is the doc
  ids present (``plan_from_rows``).
* **score**: one per-row metric per task (see :func:`read`), graded by
  :func:`~evalframe.importers._kit.grade`: a number is a score, a non-finite
  value or one that is not a number is ``judge_error``. A metric that is never
  a per-row score (every row holds a (gold, prediction) pair that lm-eval
  aggregates over the task, e.g. ``f1`` of masakhaner) is not a grade at all:
  its rows are ``not_scored`` (one ``not_a_score`` note per file). A row whose
  ``percent_parseable`` is 0 (lm-eval could not parse the answer, and wrote 0
  for the task metric) is ``judge_error``: the 0 is not a judgment. Header
  aggregates are recorded in ``info`` and are never evidence.

Modules
-------
The import follows the data, one job per module:

* ``files``: file names, samples rows and results files as read;
* ``results``: facts of a results file: the model, ``n-samples``, tasks, aggregates;
* ``grading``: binary metrics, unparseable answers, the ledger rows of a task;
* ``batch``: the files of one import linked; each task's filter and metric; the plan;
* ``reader``: :func:`read`.
"""

from evalframe.importers import LEDGER_SCHEMA as LEDGER_SCHEMA  # importable from here as before
from evalframe.importers.lm_eval.files import FILTER, TASK, UNKNOWN_MODEL
from evalframe.importers.lm_eval.reader import read

__all__ = ["FILTER", "TASK", "UNKNOWN_MODEL", "read"]

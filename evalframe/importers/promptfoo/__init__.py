"""Import promptfoo eval exports (``promptfoo eval --output x.json``, ``promptfoo export``).

Format
------
The JSON written by ``promptfoo eval --output x.json`` and by ``promptfoo
export`` is one document ``{evalId, results, config, shareableUrl,
metadata}`` whose ``results`` is an evaluate summary:

* **version 3** ``{version: 3, timestamp, prompts[], results[], stats}``:
  ``prompts`` lists every (provider × prompt) column the evaluator set up
  (``provider`` is the provider's label, or its id when it has no label);
* **version 2** ``{version: 2, timestamp, results[], table, stats}``: the same
  list sits in ``table.head.prompts`` (without ``provider``). Old rows lack
  ``testIdx``, ``promptIdx`` and ``failureReason``.

A bare summary (``results`` is the list of rows, with ``table``/``stats``
beside it, as very old versions wrote) is read the same way, and a ``.jsonl``
file (``--output x.jsonl``) is read as one result row per line. Each row of
``results[]`` is one (prompt × provider × test case) execution: promptfoo's
``EvaluateResult`` with ``GradingResult`` and ``ResultFailureReason`` (0 none,
1 an assertion failed, 2 an execution error), defined in ``src/types/index.ts``
of promptfoo/promptfoo; user documentation:
https://www.promptfoo.dev/docs/configuration/outputs/.

How rows are read
-----------------
* **candidate**: the provider's ``label`` when it is not empty, else its
  ``id`` (promptfoo's own provider key, the ``provider`` of a ``prompts[]``
  column): the provider is who answers.
* **task**: the prompt is what is asked (promptfoo runs every prompt × every
  provider on the tests). When the import holds more than one distinct
  prompt, each prompt is a task (SPEC §1: tasks are keys, each audited
  apart): the plan's case column ``task`` is the prompt's printable name —
  its label with white space collapsed to single spaces, cut to 60
  characters and an ellipsis (a prompt without a label is named by its
  ``promptId``, else ``prompt <promptIdx>``; names that still clash in one
  file get ``#1``, ``#2``) — and case ids are ``<task>/<test>``. A version 2
  export of one provider and two prompts thus has one candidate on two
  tasks. An import of one prompt has no ``task`` column.
* **case_id**: ``testIdx`` as a string when every row has it (``testCaseIdx``
  in some old versions); else the first 12 hex digits of the SHA-256 of the
  row's ``vars`` as canonical JSON (see :func:`vars_case_id`). promptfoo
  gives a new ``testIdx`` to every repetition of ``--repeat``; when the config
  declares ``evaluateOptions.repeat = R`` and its tests can be expanded, the
  R repetitions of a test become trials 1..R of one case, whose id is the
  ``testIdx`` of its first repetition. Otherwise every row is trial 1 (and
  repeated runs of one test without ``testIdx`` share a key, which the audit
  refuses as a duplicate). ``testIdx`` numbers the tests of one eval, so
  several files are combined on the assumption that they share one test list.
* **status**: ``failureReason`` 2 is an execution failure (``exec_status``
  ``timeout`` when promptfoo's error says the test timed out or the eval
  exceeded its maximum duration, else ``error``); ``failureReason`` 1 is a
  completed, scored fail. The ``error`` text alone never is an execution
  failure, because promptfoo also writes an assertion's failure reason there.
  A completed row is ``scored`` when it has a ``gradingResult`` and
  ``not_scored`` when it has none (no assertions ran, e.g. ``No output``
  rows, or the grading result was stripped). Rows without ``failureReason``
  (version 2) count as an execution error when they carry an ``error`` and
  no grading result, except promptfoo's ``No output`` row, which completed
  without output.

The grade (``--score``)
-----------------------
The ledger's ``passed`` is promptfoo's own verdict and ``score`` is what
``score`` chose (:func:`~evalframe.importers._kit.choose_score`; a name the
export does not have refuses as ``unknown_score``, naming those it has):

* ``success`` (the default): the binary grade from the row's ``success``
  (``gradingResult.pass`` when ``success`` is absent): ``passed`` is the
  verdict and ``score`` is 1 or 0, so the audit's default ``--grade binary``
  reads it (under ``--grade numeric`` the mean score is then the pass rate).
* ``score``: promptfoo's weighted assertion score (the row's ``score``, else
  ``gradingResult.score``, normally a fraction in [0, 1]) with ``passed``
  still from ``success``: audit with ``--grade numeric``, where the mean is
  the weighted score and ``passed`` (not a threshold) counts the passes.
* any other name: the named assertion metric ``namedScores[<name>]`` (the
  ``metric`` of an assertion; promptfoo sums the component scores of a
  metric into it), with ``passed`` from the component results whose
  assertion has that ``metric`` (the column is left out when some scored row
  has none). A row without the metric is ``not_scored``.

A value that is not a score is a grader failure (``judge_error``) with the
flag ``nonfinite_score`` (NaN, Infinity) or ``not_a_score``
(:func:`~evalframe.importers._kit.grade`).

An assertion whose code threw (promptfoo's reason ``Custom function threw
error: ...``) or whose grader failed (``metadata.graderError``) is recorded
by promptfoo as a failed assertion with score 0 (``failureReason`` 1), but it
judged nothing. Since a test passes only when every assertion passes, the
row's fail still stands when another assertion gave a valid fail; otherwise
the row has no valid verdict and is a grader failure (``judge_error``, with a
``grader_error`` flag naming the candidate). The weighted ``score`` averages
that 0 in, so under ``score`` any such assertion makes the row a grader
failure; under a named metric, any such assertion of that metric.

The plan
--------
Planned units are the declared test runs, each on the (provider × prompt)
columns (``prompts[]``) it runs on: every column, unless the test (or
``defaultTest``) names its ``prompts`` or ``providers`` (by label, id, a
``*`` wildcard or a ``group:`` prefix; see ``scope``), in which case only the
columns it names. A plan of scoped tests is a units table, not a cross
product. A filter that names no column leaves its test on every column, and a
row on a column its test's filter leaves out (a promptfoo that did not apply
the filters) plans every test on every column, each with a
``header_rows_disagree`` flag. The test runs are expanded from ``config``
(``tests``, ``scenarios``, ``defaultTest.vars``, array-valued variables,
``evaluateOptions.repeat``) exactly as promptfoo numbers them; this is only
possible when the tests are written inline. If they are not (a file
reference, a ``file://`` variable), or if the rows contradict the expansion
(a ``testIdx`` beyond it, or variables that differ), the plan is the cases
seen in any row × the declared columns (scoped by the filters each row's
``testCase`` records), with a ``plan_from_rows`` flag: a
test that no candidate ran cannot be detected as missing then. An export
with no row and no declared column has no plan and refuses
(``empty_plan``, ``empty_candidates``). Header totals (``stats``,
``prompts[].metrics``) are never evidence; when they disagree with the rows
a ``header_rows_disagree`` flag says so.

Modules
-------
The import follows the data, one job per module:

* ``rows``: one result row: provider, prompt, test index, status, grade;
* ``declared``: the tests a config declares, expanded as promptfoo numbers them;
* ``scope``: the columns a test runs on (its ``prompts`` and ``providers`` filters);
* ``export``: an export file loaded (v2, v3, legacy, jsonl);
* ``file``: one file read: candidates, planned cases, rows, header checks;
* ``reader``: :func:`read`.
"""

from evalframe.importers import LEDGER_SCHEMA
from evalframe.importers.promptfoo.declared import vars_case_id
from evalframe.importers.promptfoo.reader import read
from evalframe.importers.promptfoo.rows import FAILURE_ASSERT as FAILURE_ASSERT
from evalframe.importers.promptfoo.rows import FAILURE_ERROR as FAILURE_ERROR
from evalframe.importers.promptfoo.rows import FAILURE_NONE as FAILURE_NONE
from evalframe.importers.promptfoo.rows import SUCCESS, WEIGHTED

__all__ = ["LEDGER_SCHEMA", "SUCCESS", "WEIGHTED", "read", "vars_case_id"]

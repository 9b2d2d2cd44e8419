"""Import ragas result CSVs (``evaluate(...).to_pandas().to_csv(path)``) into a plan and status ledger.

Format
------
``ragas.evaluate`` returns an ``EvaluationResult`` whose ``to_pandas()`` is
one row per question: the sample's own columns (``user_input``,
``retrieved_contexts``, ``response``, ``reference``; older versions
``question``, ``contexts``, ``answer``, ``ground_truth``) followed by one
column per metric (``faithfulness``, ``answer_relevancy``,
``context_precision``, …) holding a score in [0, 1]. When a metric fails
for a row (the judge timed out, its output could not be parsed) ragas stores
NaN, which ``to_csv`` writes as an empty cell, and ragas' own aggregate is
a NaN-skipping mean (ragas issue #3028): a "faithfulness 0.583" may rest on
one row of ten. The ragas documentation of the result object:
https://docs.ragas.io/en/stable/references/evaluate/.

How rows are read
-----------------
* **candidate**: the file's stem (ragas writes no model name; one CSV is one
  run of one pipeline). Two CSVs are two candidates.
* **case_id**: the question text (``user_input``, else ``question``, else
  ``input``), or the column named by ``id_column`` (``--id-column``); trial
  and attempt 1. A question that appears twice in a file is two rows of one
  unit, which the audit refuses as a duplicate.
* **grade** (``--score``): one metric column, chosen with
  :func:`~evalframe.importers._kit.choose_score`: a name the CSV does not
  have refuses (``unknown_score``) naming its metric columns, and with
  several metric columns and none declared the import refuses
  (``ambiguous_score``). A number is ``scored``; an empty cell or NaN is a
  grader failure (``judge_error``, flagged ``nonfinite_score``), **never a
  missing row and never a zero**. Scores are fractions: audit with
  ``--grade numeric`` (and ``--pass-threshold`` for pass/fail); a metric
  whose every score is 0 or 1 also reads under ``--grade binary``.
* **plan**: the questions of the file (``plan_from_rows``: the CSV declares
  no dataset, so a question ragas never wrote cannot be seen as missing).

A file that is not such a CSV (not UTF-8, bad quoting, ragged records, no
question column) is an input error naming the file and line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from evalframe.importers import Imported
from evalframe.importers._kit import find_files
from evalframe.importers._per_case import assemble_tables, read_metric_csv
from evalframe.load import PathLike

__all__ = ["read"]

_PLAN_NOTE: Final = (
    "a ragas CSV declares no dataset: the plan is its {n} question(s), so a question "
    "ragas never wrote cannot be counted as missing"
)


def read(paths: Sequence[PathLike], *, score: str | None = None, id_column: str | None = None) -> Imported:
    """Read ragas result CSVs into a plan, a status ledger, notes and file facts.

    Parameters
    ----------
    paths
        CSV files, or folders searched for ``*.csv``.
    score
        The metric column to grade with (e.g. ``faithfulness``); None: the
        only metric column of each file.
    id_column
        The column that names the cases; None: the question text.

    Returns
    -------
    Imported
        ``plan``: per file (candidate), the cases of its rows, one trial.
        ``ledger``: one row per CSV record, columns ``candidate``,
        ``case_id``, ``run_id`` (String, null), ``trial``, ``attempt``
        (Int64, 1), ``exec_status`` (``completed``), ``score_status``
        (``scored``, or ``judge_error`` for an empty / NaN / non-numeric
        cell), ``score`` (Float64, the metric in [0, 1]), ``has_output``
        (null), ``limit`` (null), ``line`` (Int64: the physical line where
        the record ends; the header is line 1) and ``source``. No ``passed``:
        ragas gives no verdict. ``notes``: ``plan_from_rows`` per file,
        ``nonfinite_score`` / ``not_a_score`` per metric with failed cells.
        ``info``: per file its id column, metric columns, chosen metric, rows.

    Raises
    ------
    InputFormatError
        A path that does not exist, or a file that is not a ragas CSV.
    ImportRefused
        ``unknown_score`` / ``ambiguous_score`` (the metric cannot be
        chosen), ``no_export`` (a folder without CSV).

    Examples
    --------
    >>> path = "data/fixtures/real/deepeval_ragas/JessicaGarson-Using-Ragas-with-Elasticsearch/ragas_evaluation.csv"
    >>> imported = read([path], score="context_precision")
    >>> imported.ledger.select("case_id", "score_status", "score").head(2)
    shape: (2, 3)
    ┌─────────────────────────────────────────────────────┬──────────────┬───────┐
    │ case_id                                             ┆ score_status ┆ score │
    │ ---                                                 ┆ ---          ┆ ---   │
    │ str                                                 ┆ str          ┆ f64   │
    ╞═════════════════════════════════════════════════════╪══════════════╪═══════╡
    │ Can you suggest a fantasy book by a popular author? ┆ scored       ┆ 0.5   │
    │ Recommend a book with good reviews                  ┆ scored       ┆ 1.0   │
    └─────────────────────────────────────────────────────┴──────────────┴───────┘
    """
    files, notes = find_files(
        paths, is_export=lambda p: p.suffix.lower() == ".csv", what="ragas result CSV (.csv)", required=True
    )
    tables = [read_metric_csv(Path(p), score=score, id_column=id_column, candidate=p.stem, fmt="ragas") for p in files]
    return assemble_tables(tables, notes, paths=paths, files=files, plan_note=_PLAN_NOTE)

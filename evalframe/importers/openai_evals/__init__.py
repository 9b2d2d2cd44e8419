"""Import OpenAI Evals record logs (``oaieval --record_path``) into a plan and status ledger.

A record log is JSON Lines: ``{"spec": {...}}`` first (``completion_fns``,
``eval_name``, ``base_eval``, ``split``, ``run_id``, ``run_config``,
``created_at``), then one event per line (``run_id``, ``event_id``,
``sample_id``, ``type``, ``data``, ``created_by``, ``created_at``), and a
``{"final_report": {...}}`` line when the run finished (it may sit before
the last events, which are flushed at exit). The schema is the ``Event``
dataclass and the recorder methods in ``evals/record.py`` of openai/evals:
``record_match`` writes ``match`` events (``data.correct`` is a bool),
``record_metrics`` writes ``metrics`` events (model-graded evals record
``{"choice": ..., "score": ...}``), ``record_sampling`` writes ``sampling``
events and ``record_error`` writes ``error`` events.

How the log maps onto evalframe:

* **candidate**: the spec's ``completion_fns`` joined with ``,`` (else its
  ``model`` / ``model_name``);
* **case_id**: the event's ``sample_id`` (e.g.
  ``semantic_role_recognition.test.231``); **trial** and **attempt** are 1;
* **task**: when logs of several evals are read together, each log's
  ``eval_name`` (else ``base_eval``) is its samples' task (plan column
  ``task``): tasks are keys, audited apart and never pooled;
* **run_id**: the spec's ``run_id``; logs of one completion function and one
  eval whose specs record other settings (split, ``run_config`` such as
  ``eval_spec.args``, ``seed``, ``max_samples``, and the command's
  ``--completion_args``) are different candidates named by the keys that
  differ, with a ``settings_differ`` flag (a key one log records and another
  does not is ``unknown``);
* **plan**: the sample ids seen in the events. The log declares no dataset
  size, so a sample that never produced an event cannot be seen as missing:
  every log gets a ``plan_from_rows`` note saying so. A log with no event
  naming a sample (e.g. only its spec and ``final_report``) is no evidence
  at all and refuses the import (``empty_plan``): a summary is never audited;
* **grade**: events are grouped by ``sample_id`` (never counted as samples).
  A sample's grade events are its ``match`` events (``data.correct``) and its
  ``metrics`` events carrying ``data.score``; with ``score="<key>"`` both
  read ``data[<key>]`` instead, and a key that no grade event of the log
  carries refuses naming the keys they do carry (``unknown_score``). Each
  value is graded by :func:`~evalframe.importers._kit.grade`: a null, a
  non-finite number or a value that is not a score (text, a list) makes the
  sample ``judge_error``; a sample with events but no grade is
  ``not_scored``; a sample with an ``error`` event and no grade is an
  execution ``error``. Several grades of one sample give their mean as the
  score and ``passed`` only when all of them passed.

``final_report`` numbers are reported in ``info`` and are never evidence.
Where they can be recomputed from the events and differ, a
``header_rows_disagree`` note says so: ``accuracy`` against the mean of the
``match`` grades (over events, as oaieval computes it), ``score`` against
the mean of the ``metrics`` scores (a declared key: against the mean of that
key over the grade events) and ``n_samples`` against the samples seen. A log
with no ``final_report`` gets a ``run_status`` note (the run stopped early or
the log was cut).

Modules
-------
The import follows the data, one job per module:

* ``events``: the spec line, events grouped by sample, the final report;
* ``grading``: the grade key, each sample's grades, the final report checked;
* ``reader``: :func:`read`.
"""

from evalframe.importers.openai_evals.events import (
    EVENT_KEYS,
    GRADE_EVENTS,
    MATCH_KEY,
    METRICS_KEY,
    OUTPUT_EVENTS,
    REPORT_KEYS,
    REPORT_SAMPLES,
)
from evalframe.importers.openai_evals.reader import read

__all__ = [
    "EVENT_KEYS",
    "GRADE_EVENTS",
    "MATCH_KEY",
    "METRICS_KEY",
    "OUTPUT_EVENTS",
    "REPORT_KEYS",
    "REPORT_SAMPLES",
    "read",
]

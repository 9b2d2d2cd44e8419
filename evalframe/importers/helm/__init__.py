"""Import HELM run folders into an evalframe plan and status ledger.

A HELM run folder (``benchmark_output/runs/<suite>/<run name>/``) holds
``run_spec.json`` (the run's name and ``adapter_spec``: model,
``max_eval_instances``, ``num_train_trials``), ``scenario_state.json``
(``request_states``: one request per instance × train trial, more for the
``multiple_choice_separate_*`` methods), ``per_instance_stats.json`` (one
entry per instance × perturbation × train trial — or several, one per metric
class — with its list of stats) and ``stats.json`` (run-level stats per
metric name and split). The schema is the set of dataclasses of
stanford-crfm/helm: ``PerInstanceStats``
(``src/helm/benchmark/metrics/metric.py``), ``Stat`` / ``MetricName``
(``src/helm/benchmark/metrics/statistic.py``, ``metric_name.py``),
``ScenarioState`` / ``RequestState`` (``src/helm/benchmark/adaptation/``) and
``RequestResult`` (``src/helm/common/request.py``).

How the export maps onto evalframe:

* **candidate**: ``run_spec.adapter_spec.model`` (e.g. ``openai/gpt2``);
* **case_id**: the instance id, plus ``/<perturbation name>`` for a perturbed
  instance (``id11/typos``); when one instance carries two different
  perturbations with the same name, their other fields are appended
  (``id11/typos[prob=0.1]``). When one call reads runs of several scenarios,
  every case id is prefixed with the scenario (the run name without its
  ``model=`` argument) so that instance ids of different scenarios never meet;
* **task**: when one call reads runs of several scenarios, each scenario is
  a task (plan column ``task``): tasks are keys, audited apart and never
  pooled or ranked together; one scenario has no ``task`` column;
* **trial**: ``train_trial_index + 1``;
* **run_id**: the run name (``run_spec.name``);
* **plan**: the instances of ``scenario_state.request_states`` × trials
  ``1..num_train_trials``, with plan columns ``split`` (the instance's split,
  a slice) and ``scenario``;
* **split**: one audit never pools two splits (HELM reports each split on its
  own, so a pooled rate matches none of its numbers). A run whose instances
  are all in one split is planned whole. A run holding several splits plans
  only its ``test`` instances (the split HELM's leaderboards report) and a
  ``limited_run`` note names how many instances of each other split were left
  out (of the plan and of the ledger). Another split is declared with
  ``score="<stat>,split=<split>"`` (``--score exact_match,split=valid``;
  not ``@``, which HELM stat names use: ``exact_match@5``); a declared split
  the run does not have refuses (``unknown_score``), and several splits none
  of which is ``test`` refuse (``ambiguous_score``) until one is declared;
* **grade**: the ``mean`` of the chosen stat (default ``exact_match``) in the
  unit's per-instance stats, graded by :func:`~evalframe.importers._kit.grade`:
  a stat entry without a value (HELM writes ``count`` 0 and a null ``mean``
  when its metric could not compute one) or with a non-finite value is a
  ``judge_error``; a unit with no entry of that stat is ``not_scored``. A stat
  name the run does not have — the default ``exact_match`` included, e.g. in
  the safety suites — refuses naming the stats it has (``unknown_score``).
  ``passed`` is set when every score read in the call is exactly 0 or 1;
  otherwise the ledger has no ``passed`` column and the audit needs
  ``grade="numeric"`` and a pass threshold;
* **execution**: a request whose ``result.success`` is false (e.g. "Content
  blocked") is an execution ``error`` and a request without a result is
  ``not_started``, even when HELM's metrics (LLM judges included) recorded a
  value for it: that value is never a grade (a ``run_status`` note names it).

``stats.json`` and the run spec's ``max_eval_instances`` are reported in
``info`` and are never evidence: coverage comes from the per-instance rows.

Modules
-------
The import follows the data, one job per module:

* ``files``: run discovery, JSON field checks, case labels;
* ``state``: ``run_spec.json`` and ``scenario_state.json``: what a run plans;
* ``stats``: per-instance stats, their values, ``stats.json``;
* ``run``: one run folder: the stat graded, the split audited, the rows;
* ``reader``: :func:`read`: every run folder, one plan and ledger.
"""

from evalframe.importers.helm.files import (
    DEFAULT_SPLIT,
    DEFAULT_STAT,
    PER_INSTANCE_STATS,
    REQUIRED_FILES,
    RUN_SPEC,
    SCENARIO,
    SCENARIO_STATE,
    SPLIT,
    SPLIT_MARK,
    STATS,
)
from evalframe.importers.helm.reader import read

__all__ = [
    "DEFAULT_SPLIT",
    "DEFAULT_STAT",
    "PER_INSTANCE_STATS",
    "REQUIRED_FILES",
    "RUN_SPEC",
    "SCENARIO",
    "SCENARIO_STATE",
    "SPLIT",
    "SPLIT_MARK",
    "STATS",
    "read",
]

"""The frozen plan: which (candidate, case_id, trial) units were meant to be evaluated.

A plan is fixed before any result is read. It holds one row per case (with
optional slice columns, ``expected``, ``dataset_version`` and ``case_hash``),
the candidates, the number of trials, and optionally the run every result row
must come from. Its planned units are the cross product
candidates × cases × trials, unless an explicit units table is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, LINE, SOURCE, TRIAL, UNIT_KEY
from evalframe.errors import PlanError
from evalframe.load import Loaded, PathLike, load
from evalframe.problems import concat_problems, problems_frame
from evalframe.schemas import PlanCasesModel, failures_as_problems


def _infer_dtypes(frame: pl.DataFrame, keep: Sequence[str]) -> pl.DataFrame:
    """Cast String columns of a CSV plan to Int64 or Float64 when every value parses."""
    casts = []
    for name, dtype in frame.schema.items():
        if name in keep or dtype != pl.String:
            continue
        col = frame.get_column(name)
        for target in (pl.Int64, pl.Float64):
            parsed = col.cast(target, strict=False)
            if parsed.null_count() == col.null_count() and col.len() > 0:
                casts.append(parsed.alias(name))
                break
    return frame.with_columns(casts) if casts else frame


def _identifier_problems(values: Sequence[str], what: str, source: str) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    if not values:
        problems.append({"kind": "empty_candidates", "source": source, "detail": f"no {what} declared"})
    seen: set[str] = set()
    for v in values:
        if v == "":
            problems.append({"kind": "empty_identifier", "source": source, "detail": f"empty {what}"})
        elif v.strip() != v:
            problems.append(
                {
                    "kind": "padded_identifier",
                    "source": source,
                    CANDIDATE: v,
                    "detail": f"{what} {v!r} has white space around it",
                }
            )
        if v in seen:
            problems.append(
                {
                    "kind": "repeated_candidate",
                    "source": source,
                    CANDIDATE: v,
                    "detail": f"{what} {v!r} declared more than once",
                }
            )
        seen.add(v)
    return problems


@dataclass(frozen=True)
class Plan:
    """A frozen evaluation plan.

    Attributes
    ----------
    cases
        One row per case: ``case_id`` (String) plus any plan columns
        (slices, ``expected``, ``dataset_version``, ``case_hash``), sorted by
        ``case_id``.
    candidates
        The planned candidates, in declaration order.
    trials
        Trials per (candidate, case); trials are numbered 1..``trials``
        (a units table may number its own, e.g. from 0: see
        :attr:`trial_range`).
    run_id
        The run every ledger row must come from, or None.
    units
        Explicit planned units (``candidate``, ``case_id``, ``trial`` Int64)
        when the plan is not the full cross product; else None.
    source
        Where the plan came from (file path or ``"plan"``).
    trial_bounds
        Overrides :attr:`trial_range` (set by :meth:`for_candidate` so a
        restricted plan judges trials exactly as the whole plan does).
    """

    cases: pl.DataFrame
    candidates: tuple[str, ...]
    trials: int = 1
    run_id: str | None = None
    units: pl.DataFrame | None = None
    source: str = "plan"
    trial_bounds: tuple[int, int] | None = None

    @classmethod
    def from_frame(
        cls,
        cases: pl.DataFrame | pl.LazyFrame,
        *,
        candidates: Sequence[str] | None = None,
        trials: int = 1,
        run_id: str | None = None,
        source: str = "plan",
        problems: pl.DataFrame | None = None,
    ) -> Plan:
        """Build and validate a plan from a cases (or units) frame.

        Parameters
        ----------
        cases
            One row per ``case_id`` (String). If it has a ``candidate``
            column it is an explicit units table instead: one row per
            (candidate, case_id[, trial]); case-level columns must then agree
            across the rows of a case.
        candidates
            Planned candidates; required unless ``cases`` has a ``candidate``
            column.
        trials
            Trials per (candidate, case), ≥ 1 (ignored for a units table with
            a ``trial`` column).
        run_id
            Require every ledger row to carry this ``run_id``.
        source
            Name used in problems (a file path for file input).
        problems
            Problems already found while reading the plan file.

        Returns
        -------
        Plan

        Raises
        ------
        PlanError
            With every problem found: ``empty_plan``, ``duplicate_case``,
            ``empty_identifier``, ``padded_identifier``, ``empty_candidates``,
            ``repeated_candidate``, ``invalid_trials``, ``missing_column``
            and any problem of the file itself.

        Examples
        --------
        >>> plan = Plan.from_frame(pl.DataFrame({"case_id": ["refund", "quote"]}), candidates=["A", "B"])
        >>> plan.planned_units().collect()
        shape: (4, 3)
        ┌───────────┬─────────┬───────┐
        │ candidate ┆ case_id ┆ trial │
        │ ---       ┆ ---     ┆ ---   │
        │ str       ┆ str     ┆ i64   │
        ╞═══════════╪═════════╪═══════╡
        │ A         ┆ quote   ┆ 1     │
        │ A         ┆ refund  ┆ 1     │
        │ B         ┆ quote   ┆ 1     │
        │ B         ┆ refund  ┆ 1     │
        └───────────┴─────────┴───────┘
        """
        frame = cases.collect() if isinstance(cases, pl.LazyFrame) else cases
        found: list[pl.DataFrame] = [problems if problems is not None else problems_frame()]
        extra: list[dict[str, Any]] = []
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            extra.append(
                {
                    "kind": "invalid_trials",
                    "source": source,
                    "detail": f"trials must be a positive integer, got {trials!r}",
                }
            )
            trials = 1
        if CASE_ID not in frame.columns:
            extra.append({"kind": "missing_column", "source": source, "detail": "the plan has no case_id column"})
            raise PlanError(concat_problems([*found, problems_frame(extra)]))
        if frame.schema[CASE_ID] != pl.String:
            frame = frame.with_columns(pl.col(CASE_ID).cast(pl.String))
        if LINE not in frame.columns:
            frame = frame.with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
        units: pl.DataFrame | None = None
        if CANDIDATE in frame.columns:
            if candidates is not None:
                extra.append(
                    {
                        "kind": "repeated_candidate",
                        "source": source,
                        "detail": "candidates given both as a list and as a plan column",
                    }
                )
            unit_cols = [CANDIDATE, CASE_ID] + ([TRIAL] if TRIAL in frame.columns else [])
            units = frame.select(*unit_cols, LINE)
            if TRIAL not in units.columns:
                units = units.join(pl.DataFrame({TRIAL: range(1, trials + 1)}, schema={TRIAL: pl.Int64}), how="cross")
            units = units.with_columns(
                pl.col(TRIAL).cast(pl.Int64, strict=False).alias("_trial"), pl.col(CANDIDATE).cast(pl.String)
            )
            bad_trials = units.filter(pl.col("_trial").is_null() | (pl.col("_trial") < 0))
            found.append(
                bad_trials.select(
                    pl.lit("invalid_trials").alias("kind"),
                    pl.lit(source).alias(SOURCE),
                    LINE,
                    CANDIDATE,
                    CASE_ID,
                    pl.format("trial {} is not a whole number ≥ 0", pl.col(TRIAL).cast(pl.String)).alias("detail"),
                )
            )
            units = units.drop(TRIAL).rename({"_trial": TRIAL})
            dup_units = units.filter(pl.len().over(UNIT_KEY) > 1)
            found.append(
                dup_units.select(
                    pl.lit("duplicate_case").alias("kind"),
                    pl.lit(source).alias(SOURCE),
                    LINE,
                    *UNIT_KEY,
                    pl.lit("planned unit listed more than once").alias("detail"),
                )
            )
            found.append(
                failures_as_problems(units.select(pl.col(CANDIDATE).alias(CASE_ID), LINE), PlanCasesModel).rename(
                    {CASE_ID: CANDIDATE}
                )
            )
            candidates = units.get_column(CANDIDATE).unique(maintain_order=True).to_list()
            trials = max(1, units.get_column(TRIAL).n_unique())
            case_cols = [c for c in frame.columns if c not in (CANDIDATE, TRIAL)]
            frame = frame.select(case_cols).unique(subset=[c for c in case_cols if c != LINE], keep="first")
            units = units.drop(LINE).sort(UNIT_KEY)  # duplicates were reported above and refuse the plan
            dup_mask = pl.len().over(CASE_ID) > 1
            found.append(
                frame.filter(dup_mask).select(
                    pl.lit("duplicate_case").alias("kind"),
                    pl.lit(source).alias(SOURCE),
                    LINE,
                    CASE_ID,
                    pl.lit("case-level plan columns disagree between rows of this case").alias("detail"),
                )
            )
            frame = frame.unique(subset=[CASE_ID], keep="first")
        else:
            if candidates is None:
                candidates = []
            extra.extend(_identifier_problems(list(candidates), "candidate", source))
            found.append(
                frame.filter(pl.len().over(CASE_ID) > 1).select(
                    pl.lit("duplicate_case").alias("kind"),
                    pl.lit(source).alias(SOURCE),
                    LINE,
                    CASE_ID,
                    pl.lit("case_id appears more than once in the plan").alias("detail"),
                )
            )
        if frame.height == 0:
            extra.append({"kind": "empty_plan", "source": source, "detail": "the plan has no cases"})
        plan_failures = failures_as_problems(frame, PlanCasesModel)
        if plan_failures.height:
            found.append(plan_failures.with_columns(pl.lit(source).alias(SOURCE)))
        all_problems = concat_problems([*found, problems_frame(extra)])
        if all_problems.height:
            raise PlanError(all_problems)
        return cls(
            cases=frame.drop(LINE, SOURCE, strict=False).sort(CASE_ID),
            candidates=tuple(candidates),
            trials=trials,
            run_id=run_id,
            units=units,
            source=source,
        )

    @classmethod
    def from_file(
        cls,
        path: PathLike,
        *,
        candidates: Sequence[str] | None = None,
        trials: int = 1,
        run_id: str | None = None,
    ) -> Plan:
        """Load a plan from CSV, JSON Lines or Parquet and validate it.

        CSV plan columns other than identifiers are cast to Int64 or Float64
        when every value parses (so ``input_length`` is numeric).

        Raises
        ------
        PlanError
            With every problem of the file and of the plan (see
            :meth:`from_frame`).
        InputFormatError
            When the file cannot be read at all.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "plan.csv"
        >>> _ = p.write_text("case_id,input_length\\nquote,120\\n")
        >>> Plan.from_file(p, candidates=["A"]).cases
        shape: (1, 2)
        ┌─────────┬──────────────┐
        │ case_id ┆ input_length │
        │ ---     ┆ ---          │
        │ str     ┆ i64          │
        ╞═════════╪══════════════╡
        │ quote   ┆ 120          │
        └─────────┴──────────────┘
        """
        loaded: Loaded = load(path)
        frame = loaded.frame.collect()
        if str(path).lower().endswith(".csv"):
            frame = _infer_dtypes(frame, keep=(CANDIDATE, CASE_ID, LINE, SOURCE))
        return cls.from_frame(
            frame.drop(SOURCE),
            candidates=candidates,
            trials=trials,
            run_id=run_id,
            source=str(path),
            problems=loaded.problems,
        )

    def planned_units(self) -> pl.LazyFrame:
        """Return the planned units, one row per (candidate, case_id, trial), sorted by key.

        Columns: ``candidate`` (String), ``case_id`` (String), ``trial`` (Int64).
        """
        if self.units is not None:
            return self.units.lazy().sort(UNIT_KEY)
        cands = pl.LazyFrame({CANDIDATE: list(self.candidates)}, schema={CANDIDATE: pl.String})
        trials = pl.LazyFrame({TRIAL: list(range(1, self.trials + 1))}, schema={TRIAL: pl.Int64})
        return cands.join(self.cases.lazy().select(CASE_ID), how="cross").join(trials, how="cross").sort(UNIT_KEY)

    @property
    def plan_hash(self) -> str:
        """SHA-256 (hex) of the plan's content: cases, candidates, trials, run and units.

        Independent of row order, so a shuffled plan file has the same hash.
        """
        digest = hashlib.sha256()
        digest.update(self.cases.sort(CASE_ID).write_csv().encode())
        digest.update(repr((sorted(self.candidates), self.trials, self.run_id)).encode())
        if self.units is not None:
            digest.update(self.units.sort(UNIT_KEY).write_csv().encode())
        return digest.hexdigest()

    def for_candidate(self, candidate: str) -> Plan:
        """The same plan restricted to one planned candidate (for per-candidate execution).

        Raises
        ------
        ValueError
            When ``candidate`` is not planned.
        """
        if candidate not in self.candidates:
            msg = f"candidate {candidate!r} is not planned"
            raise ValueError(msg)
        units = None if self.units is None else self.units.filter(pl.col(CANDIDATE) == candidate)
        return replace(self, candidates=(candidate,), units=units, trial_bounds=self.trial_range)

    @property
    def trial_range(self) -> tuple[int, int]:
        """Lowest and highest planned trial: (1, trials), or a units table's own range (0-based allowed)."""
        if self.trial_bounds is not None:
            return self.trial_bounds
        if self.units is not None and self.units.height:
            trials = self.units.get_column(TRIAL)
            return int(trials.min()), int(trials.max())  # type: ignore[arg-type]
        return 1, self.trials

    @property
    def n_units(self) -> int:
        """Number of planned units."""
        if self.units is not None:
            return self.units.height
        return len(self.candidates) * self.cases.height * self.trials

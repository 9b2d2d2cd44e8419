"""Break the funnel down by slice: per slice value, and per case for the missingness test (SPEC §5).

A headline rate whose missing units concentrate in one slice must say so: a
candidate that skipped every ``long_context`` case has a better-looking
``pass_rate_scored`` for a reason that has nothing to do with quality.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping, Sequence
from typing import Final

import polars as pl

from evalframe.columns import CANDIDATE, CASE_ID, CASES, FUNNEL_OUTCOMES, MISSING, PLANNED, SCORED
from evalframe.funnel import funnel, outcome_in
from evalframe.stats import real_number

SLICE_COLUMN: Final = "slice_column"
SLICE_VALUE: Final = "slice_value"
MISSING_RATE: Final = "missing_rate"
MISSING_RATIO: Final = "missing_ratio"


#: Bins for a numeric slice column: explicit edges, or ``"q<k>"`` for k quantile bins.
Bins = Mapping[str, Sequence[float] | str]


def binned(units: pl.DataFrame, slices: Sequence[str], bins: Bins | None = None) -> pl.DataFrame:
    """Return ``units`` with each slice column as a String label (numeric columns binned).

    Parameters
    ----------
    units
        One row per planned unit with the slice columns.
    slices
        Slice column names.
    bins
        Per numeric column: increasing edges (intervals ``(a, b]``, plus the
        open ends) or ``"q<k>"`` for k quantile bins. A numeric column
        without bins is used value by value.

    Raises
    ------
    ValueError
        When a slice column is not in ``units`` or a bins spec is malformed.

    Examples
    --------
    >>> u = pl.DataFrame({"input_length": [10, 600, 3000, None]})
    >>> binned(u, ["input_length"], {"input_length": [0, 512, 2048]}).get_column("input_length").to_list()
    ['(0, 512]', '(512, 2048]', '(2048, inf]', None]
    """
    out = []
    for name in slices:
        if name not in units.columns:
            msg = f"slice column {name!r} is not a plan column (plan columns: {', '.join(units.columns)})"
            raise ValueError(msg)
        col = pl.col(name)
        spec = (bins or {}).get(name)
        if spec is None:
            out.append(col.cast(pl.String))
        else:
            if not units.schema[name].is_numeric():
                msg = f"bins need a numeric slice column; {name!r} is {units.schema[name]} (not numeric)"
                raise ValueError(msg)
            out.append(interval_of(col, bin_edges(units, name, spec)))
    return units.with_columns([e.alias(n) for e, n in zip(out, slices, strict=True)])


def edge_text(value: float) -> str:
    """A bin edge as written in its labels: whole numbers without a decimal point.

    Examples
    --------
    >>> edge_text(40.0), edge_text(135.5), edge_text(1234567.0)
    ('40', '135.5', '1234567')
    """
    return str(int(value)) if value.is_integer() else repr(value)


def interval_labels(edges: Sequence[float]) -> list[str]:
    """Labels of the right-closed intervals ``(a, b]`` over ``edges``, open ends ±inf, in order."""
    import numpy as np  # imported on use: `import evalframe` does not need it

    bounds = [-np.inf, *edges, np.inf]
    return [
        f"({'-inf' if low == -np.inf else edge_text(low)}, {'inf' if high == np.inf else edge_text(high)}]"
        for low, high in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def interval_of(col: pl.Expr, edges: Sequence[float]) -> pl.Expr:
    """Label each value with its interval (see :func:`interval_labels`); null and NaN have none.

    Examples
    --------
    >>> pl.select(interval_of(pl.Series([5, 40, 41, None]), [40.0])).to_series().to_list()
    ['(-inf, 40]', '(-inf, 40]', '(40, inf]', None]

    A value's interval is the number of edges below it (a binary search: linear in the values, not in the edges).
    """
    value = col.cast(pl.Float64)
    below = pl.lit(pl.Series(list(edges), dtype=pl.Float64)).search_sorted(value, side="left")
    label = pl.lit(pl.Series(interval_labels(edges), dtype=pl.String)).gather(below)
    return pl.when(value.is_null() | value.is_nan()).then(pl.lit(None, pl.String)).otherwise(label)


def bin_edges(units: pl.DataFrame, name: str, spec: Sequence[float] | str) -> list[float]:
    """Resolve a bins spec (edges, or ``"q<k>"`` quantiles of the column) into edges.

    ``q<k>`` asks for at most as many bins as the column has distinct values (so at most the plan's cases):
    more quantile bins than values would only cut between equal values or interpolate edges around no
    case, and their number would be the input's to choose (``q1000000``: a million edges to test each row
    against).

    Raises
    ------
    ValueError
        When the spec is malformed, or ``q<k>`` asks for more bins than the column has distinct values.

    Examples
    --------
    >>> units = pl.DataFrame({"input_length": [10, 20, 30, 40, 40]})
    >>> bin_edges(units, "input_length", "q2"), bin_edges(units, "input_length", [15, 35])
    ([30.0], [15.0, 35.0])
    >>> bin_edges(units, "input_length", "q5")
    Traceback (most recent call last):
    ValueError: bins for 'input_length': q5 asks for 5 quantile bins, more than its 4 distinct values
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    if isinstance(spec, str):
        if not (spec.startswith("q") and spec[1:].isdigit() and len(spec) < 20 and int(spec[1:]) >= 2):
            msg = f"bins for {name!r} must be edges or 'q<k>' with k >= 2, got {spec!r}"
            raise ValueError(msg)
        values = units.get_column(name).drop_nulls().cast(pl.Float64).to_numpy()
        values = values[np.isfinite(values)]  # NaN has no bin; ±inf would be an edge no finite bound states
        k = int(spec[1:])
        distinct = int(np.unique(values).size)
        if k > distinct:
            msg = f"bins for {name!r}: {spec} asks for {k} quantile bins, more than its {distinct} distinct values"
            raise ValueError(msg)
        inner = np.quantile(values, np.linspace(0, 1, k + 1)[1:-1]) if values.size else np.array([])
        return sorted({float(e) for e in inner})
    try:
        given = list(spec)
    except TypeError:  # a number or None where a list of edges belongs
        given = []
    read = [real_number(e) for e in given]
    edges = [e for e in read if e is not None]
    if not given or len(edges) < len(read) or edges != sorted(set(edges)):
        shown = reprlib.repr(spec)
        msg = f"bin edges for {name!r} must be finite numbers, at least one, strictly increasing, got {shown}"
        raise ValueError(msg)
    return edges


def slice_funnel(
    units: pl.DataFrame,
    slices: Sequence[str],
    bins: Bins | None = None,
    *,
    unit: str | None = None,
    pass_fail: bool = True,
) -> pl.DataFrame:
    """The funnel per (candidate, slice column, slice value).

    ``unit`` names the planned unit of each row when a unit can have several
    (retry policy ``every``), and ``pass_fail`` says whether the grading gives
    every scored unit a pass or a fail, as in :func:`evalframe.funnel.funnel`.

    Returns
    -------
    polars.DataFrame
        One row per (candidate, slice_column, slice_value) sorted by them:
        ``slice_value`` (String; null for units without a value), the funnel
        counts and rates of :func:`evalframe.funnel.funnel`,
        ``missing_rate`` = missing / planned (Float64 fraction) and
        ``missing_ratio`` = the slice's missing rate over the candidate's
        overall missing rate (null when the candidate has no missing unit).

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["A"] * 4, "case_type": ["x", "x", "y", "y"],
    ...     "outcome": ["missing", "missing", "passed", "failed"]})
    >>> slice_funnel(units, ["case_type"]).select("slice_value", "planned", "missing", "missing_rate", "missing_ratio")
    shape: (2, 5)
    ┌─────────────┬─────────┬─────────┬──────────────┬───────────────┐
    │ slice_value ┆ planned ┆ missing ┆ missing_rate ┆ missing_ratio │
    │ ---         ┆ ---     ┆ ---     ┆ ---          ┆ ---           │
    │ str         ┆ u32     ┆ u32     ┆ f64          ┆ f64           │
    ╞═════════════╪═════════╪═════════╪══════════════╪═══════════════╡
    │ x           ┆ 2       ┆ 2       ┆ 1.0          ┆ 2.0           │
    │ y           ┆ 2       ┆ 0       ┆ 0.0          ┆ 0.0           │
    └─────────────┴─────────┴─────────┴──────────────┴───────────────┘
    """
    labelled = binned(units, slices, bins)
    funnels = {
        name: funnel(
            labelled.lazy().with_columns(pl.col(name).alias(SLICE_VALUE)),
            by=[CANDIDATE, SLICE_VALUE],
            unit=unit,
            pass_fail=pass_fail,
        )
        for name in slices
    }
    edges = {name: bin_edges(units, name, spec) for name, spec in (bins or {}).items() if name in funnels}
    return slice_rates(funnels, edges)


def slice_rates(
    funnels: Mapping[str, pl.DataFrame | pl.LazyFrame], edges: Mapping[str, Sequence[float]] | None = None
) -> pl.DataFrame:
    """The slice table of :func:`slice_funnel` from each slice column's funnel by candidate and slice value.

    The one implementation of the slice table's rates and order, for units counted by polars
    (:func:`slice_funnel`) or by another engine (Spark counts outcomes per case, see
    :mod:`evalframe.engines`).

    Parameters
    ----------
    funnels
        Per slice column, in order: the columns of :func:`evalframe.funnel.funnel` by ``candidate`` and
        ``slice_value`` (String; null for units without a value).
    edges
        Per binned slice column, its bin edges: its values are interval labels (see
        :func:`interval_labels`), sorted by interval rather than by text.

    Returns
    -------
    polars.DataFrame
        The table of :func:`slice_funnel`; empty without a slice column. A candidate's overall missing and
        planned units, the base of ``missing_ratio``, are the sums over each column's slice values (every
        unit has one value, null included).

    Examples
    --------
    >>> from evalframe.funnel import funnel_from_outcome_counts
    >>> counts = pl.DataFrame({"candidate": ["A"] * 3, "slice_value": ["x", "x", "y"],
    ...     "outcome": ["missing", "passed", "passed"], "n": [2, 2, 4]})
    >>> by_slice = funnel_from_outcome_counts(counts, by=["candidate", "slice_value"])
    >>> slice_rates({"kind": by_slice}).select("slice_value", "planned", "missing_rate", "missing_ratio").rows()
    [('x', 4, 0.5, 2.0), ('y', 4, 0.0, 0.0)]
    """
    parts = []
    for name, per in funnels.items():
        cuts = (edges or {}).get(name)
        # Binned values sort by interval, not by label text.
        order = (
            pl.col(SLICE_VALUE).replace_strict(
                {label: i for i, label in enumerate(interval_labels(cuts))}, default=None, return_dtype=pl.Int64
            )
            if cuts is not None
            else pl.lit(None, pl.Int64)
        )
        parts.append(per.lazy().with_columns(pl.lit(name).alias(SLICE_COLUMN), order.alias("_order")))
    if not parts:
        return pl.DataFrame()
    table = pl.concat(parts)
    overall = table.group_by(CANDIDATE, SLICE_COLUMN).agg(
        pl.col(MISSING).sum().cast(pl.Float64).alias("_missing_all"),
        pl.col(PLANNED).sum().cast(pl.Float64).alias("_planned_all"),
    )
    table = table.join(overall, on=[CANDIDATE, SLICE_COLUMN], how="left")
    rate = pl.col(MISSING) / pl.col(PLANNED).cast(pl.Float64)
    return (
        table.with_columns(rate.alias(MISSING_RATE))
        .with_columns(
            # (missing / planned) / (all missing / all planned), formed from the exact counts with one rounding
            # (and never a division by a broadcast constant, which polars may turn into a multiplication).
            pl.when(pl.col("_missing_all") > 0)
            .then(
                (pl.col(MISSING).cast(pl.Float64) * pl.col("_planned_all"))
                / (pl.col(PLANNED).cast(pl.Float64) * pl.col("_missing_all"))
            )
            .alias(MISSING_RATIO)
        )
        .sort([CANDIDATE, SLICE_COLUMN, "_order", SLICE_VALUE], nulls_last=True)
        .drop("_missing_all", "_planned_all", "_order")
        .select(CANDIDATE, SLICE_COLUMN, SLICE_VALUE, pl.exclude(CANDIDATE, SLICE_COLUMN, SLICE_VALUE))
        .collect()
    )


#: Outcomes that carry a grade; every other outcome (no row, not started, execution failure, no output,
#: grader failure, not scored) is *ungraded*.
GRADED_OUTCOMES: Final = FUNNEL_OUTCOMES[SCORED]
UNGRADED: Final = "ungraded"


def case_slices(
    units: pl.DataFrame, slices: Sequence[str], bins: Bins | None = None, *, case: str = CASE_ID
) -> pl.DataFrame:
    """Count cases by how many of their units are ungraded and missing, per slice value.

    The case is the independent unit of the selective-missingness test
    (SPEC §5): trials of one case share its input, so they go missing
    together more often than independent units would.

    Parameters
    ----------
    units
        One row per planned unit: ``candidate``, the ``case`` column,
        ``outcome`` and the slice columns (one value per case).
    slices
        Slice column names.
    bins
        Bins for numeric slice columns (see :func:`binned`).
    case
        The column naming the case (default ``case_id``).

    Returns
    -------
    polars.DataFrame
        One row per (candidate, slice_column, slice_value, planned,
        ungraded, missing), sorted by them: ``planned`` (Int64) is a case's
        planned units, ``ungraded`` (Int64) those whose outcome is not
        passed, failed or scored_no_threshold (no row, not started, execution
        failure, no output, grader failure, not scored), ``missing`` (Int64)
        those with no row at all, and ``cases`` (Int64) the number of cases
        with these counts. ``slice_value`` is null for cases without a value.

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["A"] * 6, "case_id": ["a", "a", "b", "b", "c", "c"],
    ...     "case_type": ["x", "x", "x", "x", "y", "y"],
    ...     "outcome": ["missing", "exec_failed", "passed", "failed", "passed", "judge_failed"]})
    >>> case_slices(units, ["case_type"])
    shape: (3, 7)
    ┌───────────┬──────────────┬─────────────┬─────────┬──────────┬─────────┬───────┐
    │ candidate ┆ slice_column ┆ slice_value ┆ planned ┆ ungraded ┆ missing ┆ cases │
    │ ---       ┆ ---          ┆ ---         ┆ ---     ┆ ---      ┆ ---     ┆ ---   │
    │ str       ┆ str          ┆ str         ┆ i64     ┆ i64      ┆ i64     ┆ i64   │
    ╞═══════════╪══════════════╪═════════════╪═════════╪══════════╪═════════╪═══════╡
    │ A         ┆ case_type    ┆ x           ┆ 2       ┆ 0        ┆ 0       ┆ 1     │
    │ A         ┆ case_type    ┆ x           ┆ 2       ┆ 2        ┆ 1       ┆ 1     │
    │ A         ┆ case_type    ┆ y           ┆ 2       ┆ 1        ┆ 0       ┆ 1     │
    └───────────┴──────────────┴─────────────┴─────────┴──────────┴─────────┴───────┘
    """
    if not slices:
        return cases_by_slice(pl.DataFrame(), slices)
    labelled = binned(units, slices, bins)
    graded = outcome_in(labelled.schema, *GRADED_OUTCOMES)
    per_case = (
        labelled.lazy()
        .group_by(CANDIDATE, case)
        .agg(
            pl.len().cast(pl.Int64).alias(PLANNED),
            (~graded).sum().cast(pl.Int64).alias(UNGRADED),
            outcome_in(labelled.schema, "missing").sum().cast(pl.Int64).alias(MISSING),
            *(pl.col(name).first() for name in slices),
        )
    )
    return cases_by_slice(per_case, slices)


def cases_by_slice(per_case: pl.DataFrame | pl.LazyFrame, slices: Sequence[str]) -> pl.DataFrame:
    """The table of :func:`case_slices` from one row per (candidate, case) with its counts and slice labels.

    The one implementation of that count, for cases counted by polars (:func:`case_slices`) or by another
    engine (Spark sends per-case sums, see :mod:`evalframe.engines`).

    Parameters
    ----------
    per_case
        One row per (candidate, case): ``candidate``, ``planned``, ``ungraded`` and ``missing`` (integers:
        the case's units, see :func:`case_slices`) and each slice column as its String label (null for a case
        without a value). With a ``cases`` column (integer), a row stands for that many cases (an engine
        sends cases already counted by these columns).
    slices
        Slice column names.

    Returns
    -------
    polars.DataFrame
        The table of :func:`case_slices`.

    Examples
    --------
    >>> per_case = pl.DataFrame({"candidate": ["A"] * 3, "planned": [2, 2, 2], "ungraded": [2, 0, 0],
    ...     "missing": [2, 0, 0], "kind": ["x", "x", "y"]})
    >>> cases_by_slice(per_case, ["kind"]).select("slice_value", "ungraded", "cases").rows()
    [('x', 0, 1), ('x', 2, 1), ('y', 0, 1)]
    """
    key = [CANDIDATE, SLICE_COLUMN, SLICE_VALUE, PLANNED, UNGRADED, MISSING]
    schema = pl.Schema({c: pl.String() if i < 3 else pl.Int64() for i, c in enumerate([*key, CASES])})
    if not slices:
        return pl.DataFrame(schema=schema)
    counted = per_case.lazy().with_columns(pl.col(PLANNED, UNGRADED, MISSING).cast(pl.Int64))
    n = pl.col(CASES).sum() if CASES in counted.collect_schema().names() else pl.len()
    parts = [
        counted.group_by(CANDIDATE, pl.col(name).alias(SLICE_VALUE), PLANNED, UNGRADED, MISSING)
        .agg(n.cast(pl.Int64).alias(CASES))
        .with_columns(pl.lit(name).alias(SLICE_COLUMN))
        for name in slices
    ]
    return (
        pl.concat(parts).select(pl.col(CANDIDATE).cast(pl.String), *key[1:], CASES).sort(key, nulls_last=True).collect()
    )


def missing_in_one_slice(slices: pl.DataFrame) -> dict[str, str]:
    """Per candidate, the described fact that every one of its missing units lies in one slice value (SPEC §5).

    A fact, not a test: with few cases the independence test cannot call a concentration significant, and the
    headline still names the slice where every missing unit lies. Only slice columns with two or more values
    count; the first such column (in ``slices``' order) names the slice.

    Parameters
    ----------
    slices
        The slice funnel (:func:`slice_funnel`; ``AuditReport.slices``): candidate, slice_column,
        slice_value, planned and missing (Int64 units).

    Returns
    -------
    dict of str to str
        Candidate → ``"all 3 missing units lie in topic = history (3 of its 3 planned units)"``.

    Examples
    --------
    >>> s = pl.DataFrame({"candidate": ["A", "A"], "slice_column": ["topic"] * 2,
    ...     "slice_value": ["history", "math"], "planned": [3, 3], "missing": [3, 0]})
    >>> missing_in_one_slice(s)
    {'A': 'all 3 missing units lie in topic = history (3 of its 3 planned units)'}
    """
    if slices.is_empty() or MISSING not in slices.columns:
        return {}
    facts: dict[str, str] = {}
    for (candidate, column), rows in slices.group_by(CANDIDATE, SLICE_COLUMN, maintain_order=True):
        total = int(rows.get_column(MISSING).fill_null(0).sum())
        hit = rows.filter(pl.col(MISSING) > 0)
        if rows.height < 2 or total == 0 or hit.height != 1 or str(candidate) in facts:
            continue
        r = hit.row(0, named=True)
        facts[str(candidate)] = (
            f"all {total} missing units lie in {column} = {r[SLICE_VALUE]} "
            f"({r[MISSING]} of its {r[PLANNED]} planned units)"
        )
    return facts

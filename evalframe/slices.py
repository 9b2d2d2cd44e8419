"""Break the funnel down by slice and test whether missingness depends on the slice (SPEC §5).

A headline rate whose missing units concentrate in one slice must say so: a
candidate that skipped every ``long_context`` case has a better-looking
``pass_rate_scored`` for a reason that has nothing to do with quality.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import polars as pl

from evalframe.columns import CANDIDATE, MISSING, PLANNED
from evalframe.funnel import funnel

SLICE_COLUMN: Final = "slice_column"
SLICE_VALUE: Final = "slice_value"
MISSING_RATE: Final = "missing_rate"
MISSING_RATIO: Final = "missing_ratio"
#: Monte Carlo resamples for the Fisher–Freeman–Halton test of larger sparse tables (seeded: reproducible).
MONTE_CARLO_RESAMPLES: Final = 20_000

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
            out.append(_interval_expr(col, bin_edges(units, name, spec)))
    return units.with_columns([e.alias(n) for e, n in zip(out, slices, strict=True)])


def _edge(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def interval_labels(edges: Sequence[float]) -> list[str]:
    """Labels of the right-closed intervals ``(a, b]`` over ``edges``, open ends ±inf, in order."""
    bounds = [-np.inf, *edges, np.inf]
    return [
        f"({'-inf' if low == -np.inf else _edge(low)}, {'inf' if high == np.inf else _edge(high)}]"
        for low, high in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def _interval_expr(col: pl.Expr, edges: Sequence[float]) -> pl.Expr:
    """Label each value with its interval (see :func:`interval_labels`)."""
    expr: Any = pl.when(col.is_null()).then(pl.lit(None, pl.String))
    for high, label in zip([*edges, np.inf], interval_labels(edges), strict=True):
        expr = expr.when(col <= high).then(pl.lit(label))
    result: pl.Expr = expr.otherwise(pl.lit(None, pl.String))
    return result


def bin_edges(units: pl.DataFrame, name: str, spec: Sequence[float] | str) -> list[float]:
    """Resolve a bins spec (edges, or ``"q<k>"`` quantiles of the column) into edges.

    Raises
    ------
    ValueError
        When the spec is malformed.
    """
    if isinstance(spec, str):
        if not (spec.startswith("q") and spec[1:].isdigit() and int(spec[1:]) >= 2):
            msg = f"bins for {name!r} must be edges or 'q<k>' with k >= 2, got {spec!r}"
            raise ValueError(msg)
        values = units.get_column(name).drop_nulls().cast(pl.Float64).to_numpy()
        k = int(spec[1:])
        inner = np.quantile(values, np.linspace(0, 1, k + 1)[1:-1]) if values.size else np.array([])
        return sorted({float(e) for e in inner})
    edges = [float(e) for e in spec]
    if edges != sorted(set(edges)):
        msg = f"bin edges for {name!r} must be strictly increasing, got {list(spec)}"
        raise ValueError(msg)
    return edges


def slice_funnel(units: pl.DataFrame, slices: Sequence[str], bins: Bins | None = None) -> pl.DataFrame:
    """The funnel per (candidate, slice column, slice value).

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
    overall = funnel(labelled.lazy()).select(
        CANDIDATE,
        pl.col(MISSING).cast(pl.Float64).alias("_missing_all"),
        pl.col(PLANNED).cast(pl.Float64).alias("_planned_all"),
    )
    parts = []
    for name in slices:
        per = funnel(labelled.lazy().with_columns(pl.col(name).alias(SLICE_VALUE)), by=[CANDIDATE, SLICE_VALUE])
        spec = (bins or {}).get(name)
        # Binned values sort by interval, not by label text.
        order = (
            pl.col(SLICE_VALUE).replace_strict(
                {label: i for i, label in enumerate(interval_labels(bin_edges(units, name, spec)))},
                default=None,
                return_dtype=pl.Int64,
            )
            if spec is not None
            else pl.lit(None, pl.Int64)
        )
        parts.append(per.with_columns(pl.lit(name).alias(SLICE_COLUMN), order.alias("_order")))
    if not parts:
        return pl.DataFrame()
    table = pl.concat(parts).join(overall, on=CANDIDATE, how="left")
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


@dataclass(frozen=True)
class IndependenceTest:
    """Result of a test of independence between slice and missingness."""

    test: str
    statistic: float | None
    p_value: float | None


def independence_test(table: np.ndarray[Any, Any]) -> IndependenceTest:
    """Test whether the missing/present split is independent of the slice.

    ``table`` has one row per slice value and two columns (missing,
    present). Slices with no units are dropped. The test is chosen by the
    table, never by the result:

    * fewer than two slice values, or nothing (or everything) missing:
      ``none`` (no test possible, p-value null);
    * 2×2: Fisher's exact test (Fisher 1922, "On the interpretation of χ²
      from contingency tables, and the calculation of P", JRSS 85(1):87–94);
    * every expected count ≥ 5: Pearson's chi-square test of independence
      (Pearson 1900, Phil. Mag. 50(302):157–175), no continuity correction;
    * otherwise the Fisher–Freeman–Halton exact test by Monte Carlo
      (Freeman & Halton 1951, Biometrika 38:141–149) with
      :data:`MONTE_CARLO_RESAMPLES` seeded resamples, so results repeat.

    Examples
    --------
    >>> r = independence_test(np.array([[5, 0], [0, 5]]))
    >>> (r.test, round(r.p_value, 6))
    ('fisher_exact', 0.007937)
    """
    from scipy import stats as sps  # imported on use: scipy is slow to import

    t = np.asarray(table, dtype=np.int64)
    t = t[t.sum(axis=1) > 0]
    if t.shape[0] < 2 or (t[:, 0].sum() == 0) or (t[:, 1].sum() == 0):
        return IndependenceTest("none", None, None)
    if t.shape == (2, 2):
        res = sps.fisher_exact(t)
        return IndependenceTest("fisher_exact", float(res.statistic), float(res.pvalue))
    chi = sps.chi2_contingency(t, correction=False)
    if float(np.min(chi.expected_freq)) >= 5:
        return IndependenceTest("chi_square", float(chi.statistic), float(chi.pvalue))
    method = sps.MonteCarloMethod(n_resamples=MONTE_CARLO_RESAMPLES, rng=np.random.default_rng(0))
    res = sps.fisher_exact(t, method=method)
    # scipy returns 1-element arrays for some table shapes.
    statistic, p_value = (float(np.asarray(v).reshape(-1)[0]) for v in (res.statistic, res.pvalue))
    return IndependenceTest("fisher_freeman_halton_mc", statistic, p_value)


def missingness_tests(slice_table: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """Test, per (candidate, slice column), whether the missing rate depends on the slice.

    Parameters
    ----------
    slice_table
        Output of :func:`slice_funnel`.
    alpha
        Significance level for ``selective`` (default 0.05).

    Returns
    -------
    polars.DataFrame
        One row per (candidate, slice_column): ``n_slices`` (Int64),
        ``planned``/``missing`` (Int64), ``test`` (String, see
        :func:`independence_test`), ``statistic`` and ``p_value``
        (Float64, null when no test is possible), ``selective`` (Boolean,
        p_value < alpha) and ``stands_out`` (List[String]: when selective, the
        slice values whose missing rate is at least twice the candidate's
        overall rate and that hold at least one missing unit; else empty).

    Examples
    --------
    >>> units = pl.DataFrame({"candidate": ["A"] * 10, "case_type": ["x"] * 5 + ["y"] * 5,
    ...     "outcome": ["missing"] * 5 + ["passed"] * 5})
    >>> missingness_tests(slice_funnel(units, ["case_type"])).select("test", "selective", "stands_out").row(0)
    ('fisher_exact', True, ['x'])
    """
    rows: list[dict[str, Any]] = []
    if slice_table.is_empty():
        return pl.DataFrame()
    for (cand, col), group in slice_table.group_by(CANDIDATE, SLICE_COLUMN, maintain_order=True):
        missing = group.get_column(MISSING).to_numpy().astype(np.int64)
        planned = group.get_column(PLANNED).to_numpy().astype(np.int64)
        result = independence_test(np.column_stack([missing, planned - missing]))
        selective = result.p_value is not None and result.p_value < alpha
        # Name slices only when the test supports selective dropout (else single-case slices "stand out").
        stands = group.filter(pl.lit(selective) & (pl.col(MISSING_RATIO) >= 2) & (pl.col(MISSING) > 0))
        rows.append(
            {
                CANDIDATE: cand,
                SLICE_COLUMN: col,
                "n_slices": group.height,
                PLANNED: int(planned.sum()),
                MISSING: int(missing.sum()),
                "test": result.test,
                "statistic": result.statistic,
                "p_value": result.p_value,
                "selective": selective,
                "stands_out": sorted(str(v) for v in stands.get_column(SLICE_VALUE).drop_nulls().to_list()),
            }
        )
    schema = pl.Schema(
        {
            CANDIDATE: pl.String(),
            SLICE_COLUMN: pl.String(),
            "n_slices": pl.Int64(),
            PLANNED: pl.Int64(),
            MISSING: pl.Int64(),
            "test": pl.String(),
            "statistic": pl.Float64(),
            "p_value": pl.Float64(),
            "selective": pl.Boolean(),
            "stands_out": pl.List(pl.String),
        }
    )
    return pl.DataFrame(rows, schema=schema).sort(CANDIDATE, SLICE_COLUMN)


def selective_flag(tests: pl.DataFrame) -> pl.DataFrame:
    """One row per candidate: ``selective_missingness`` (String or null) for the summary.

    The text names each slice column whose test is significant, its p-value
    and the slices that stand out, e.g. ``"case_type (p=0.0004): long_context"``.
    """
    if tests.is_empty():
        return pl.DataFrame(schema={CANDIDATE: pl.String, "selective_missingness": pl.String})
    text = pl.format(
        "{} (p={}): {}",
        pl.col(SLICE_COLUMN),
        pl.col("p_value").round_sig_figs(2).cast(pl.String),
        pl.col("stands_out").list.join(", "),
    )
    return (
        tests.filter(pl.col("selective"))
        .group_by(CANDIDATE)
        .agg(text.sort().str.join("; ").alias("selective_missingness"))
    )

"""Does missingness depend on the slice? Case-level permutation tests, Holm-adjusted over the audit (SPEC §5).

:func:`missingness_tests` takes the case counts of
:func:`~evalframe.slices.breakdown.case_slices` and tests, per candidate and
slice column, whether ungraded and missing units concentrate in some slices;
:func:`selective_flag` words the flagged ones for the summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from evalframe.columns import CANDIDATE, CASES, MISSING, PLANNED
from evalframe.slices.breakdown import SLICE_COLUMN, SLICE_VALUE, UNGRADED

if TYPE_CHECKING:
    import numpy as np

#: The name of :func:`case_permutation_test`'s studentized test (the ``test`` columns of the missingness table).
WELCH_TEST: Final = "welch_permutation"
#: Permutations per test (seeded: reproducible); the smallest p-value is 1/(9999 + 1) = 0.0001.
MONTE_CARLO_RESAMPLES: Final = 9_999
#: The columns of the missingness tests every report shows, in order (lists of slices are ``stands_out*``).
MISSINGNESS_SHOWN: Final = (
    "candidate",
    "slice_column",
    "cases",
    "planned",
    "ungraded",
    "p_adjusted_ungraded",
    "selective_ungraded",
    "stands_out_ungraded",
    "detectable_ungraded",
    "missing",
    "p_adjusted",
    "selective",
    "stands_out",
    "detectable",
)


def missingness_shown(tests: pl.DataFrame, *, joined: bool = False) -> pl.DataFrame:
    """The :data:`MISSINGNESS_SHOWN` columns of a missingness table; ``joined``: slice lists as text."""
    return tests.select(
        pl.col(c).list.join(", ") if joined and c.startswith("stands_out") else pl.col(c) for c in MISSINGNESS_SHOWN
    )


#: The multiplicity correction of :func:`missingness_tests` (Holm 1979).
CORRECTION: Final = "holm"
#: Resampled statistics within this relative distance of the observed one count as ties (as large as it).
TIE_TOLERANCE: Final = 1e-9
_BATCH: Final = 2_000


@dataclass(frozen=True)
class IndependenceTest:
    """Result of a test of independence between slice and missingness."""

    #: The test used (see :func:`independence_test`, :func:`case_permutation_test`).
    test: str
    #: The test statistic; None when no test is possible.
    statistic: float | None
    #: The p-value; None when no test is possible.
    p_value: float | None
    #: The slices' weights w_s = n_s / σ̂_s² of a studentized test (for :func:`detectable_shift`); else None.
    weights: tuple[float, ...] | None = field(default=None, repr=False, compare=False)


def case_permutation_test(
    counts: np.ndarray[Any, Any],
    values: np.ndarray[Any, Any],
    *,
    trials: np.ndarray[Any, Any] | None = None,
    resamples: int = MONTE_CARLO_RESAMPLES,
    seed: int = 0,
    studentized: bool = True,
) -> IndependenceTest:
    """Permutation test of whether a case-level value's mean depends on the slice.

    ``counts[j, s]`` is the number of cases in slice ``s`` whose value is
    ``values[j]`` (e.g. a case's ungraded fraction) and whose planned units
    are ``trials[j]`` (default 1). Every case counts once, whatever its
    trials: the hypothesis is that the slices' mean ungraded share per case
    is the same. Cases are permuted across the slices with the slices' sizes
    kept, which is drawing a table with ``counts``' row and column sums;
    scipy does it by Patefield's algorithm (Patefield 1981, "Algorithm AS
    159: An efficient method of generating random R × C tables with given
    row and column totals", Applied Statistics 30(1):91–97), in time that
    does not grow with the number of cases.

    The statistic (``studentized``, the default) is Welch's heteroscedastic
    between-slice statistic (Welch 1951, "On the comparison of several mean
    values: an alternative approach", Biometrika 38(3/4):330–336),
    W = Σ_s w_s (ȳ_s − ȳ_w)², w_s = n_s / σ̂_s², ȳ_w = Σ_s w_s ȳ_s / Σ_s w_s,
    where the variance of slice s is that of its cases' trials: σ̂_s² =
    mean over its cases of v(t_i), v(t) the sample variance of the values of
    all cases planning t units, pooled over the slices and floored at the
    binomial p̄(1 − p̄)/t (p̄ the mean value; see :func:`case_variances`). A
    case of one trial has a share of 0 or 1, a case of six a share near the
    mean: equal means, unequal spreads. A slice of one-trial cases beside a
    slice of six-trial ones therefore differs in spread and must not look
    selective (as the unweighted statistic would, benchmarks/RESULTS.md). With the same planned units in every
    case W is H below. The p-value is the larger of the permutation p-value
    of W, exact when the cases are exchangeable (whole cases or units
    dropping out at random, equal trials), and the asymptotic χ²(S − 1)
    p-value of W, valid when the means are equal and the spreads differ by
    trials (Welch 1951; the permutation distribution of a studentized
    statistic has the same limit: Janssen 1997, "Studentized permutation
    tests for non-i.i.d. hypotheses and the generalized Behrens–Fisher
    problem", Statist. Probab. Lett. 36(1):9–21; Chung & Romano 2013,
    "Exact and asymptotically robust permutation tests", Ann. Statist.
    41(2):484–507). Rejecting only when both reject keeps each guarantee.
    With ``studentized=False`` the statistic is the unweighted between-slice
    sum of squares scaled by the total variance, H = (N − 1) Σ_s n_s
    (ȳ_s − ȳ)² / Σ_i (y_i − ȳ)², the Kruskal–Wallis form (Kruskal & Wallis
    1952, JASA 47(260):583–621) on the values; for values 0 and 1 it is
    (N − 1)/N times Pearson's chi-square of the slice × value table (used by
    :func:`independence_test` on units), and only the permutation p-value
    is returned.

    The p-value is (b + 1)/(m + 1), with b the resampled statistics at least
    the observed one among m (Phipson & Smyth 2010, "Permutation p-values
    should never be zero", Stat. Appl. Genet. Mol. Biol. 9(1):39), a valid
    p-value: P(p ≤ α) ≤ α under exchangeability. A resampled statistic
    within a relative :data:`TIE_TOLERANCE` of the observed one counts as a
    tie (as large), so a table every arrangement of which ties gives p = 1.
    Seeded: results repeat.

    Returns
    -------
    IndependenceTest
        ``welch_permutation`` with W, the p-value and the slices' weights
        w_s (``case_permutation`` with H and no weights when not
        ``studentized``); ``none`` (no p-value) with fewer than two
        non-empty slices or when every case has the same value.

    Examples
    --------
    >>> import numpy as np
    >>> # 4 slices of 10 cases; in the last every case lost all its units.
    >>> r = case_permutation_test(np.array([[10, 10, 10, 0], [0, 0, 0, 10]]), np.array([0.0, 1.0]))
    >>> (r.test, round(r.statistic, 9), r.p_value)  # equal trials: W = H = N − 1
    ('welch_permutation', 39.0, 0.0001)
    >>> case_permutation_test(np.array([[5, 5], [5, 5]]), np.array([0.0, 1.0])).p_value
    1.0
    """
    import numpy as np  # imported on use: `import evalframe` does not need it
    from scipy import stats as sps  # imported on use: scipy is slow to import

    c = np.asarray(counts, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    t = np.ones(v.shape, dtype=np.float64) if trials is None else np.asarray(trials, dtype=np.float64)
    c = c[:, c.sum(axis=0) > 0]
    keep = c.sum(axis=1) > 0
    c, v, t = c[keep], v[keep], t[keep]
    n_s, n_j = c.sum(axis=0), c.sum(axis=1)
    total = int(n_s.sum())
    mean = float(n_j @ v) / total if total else 0.0
    sst = float(n_j @ (v - mean) ** 2)
    if c.shape[1] < 2 or c.shape[0] < 2 or sst <= 0:
        return IndependenceTest("none", None, None)
    if studentized:
        attributes = np.stack([v, case_variances(v, t, n_j, mean)])  # per-slice sums of these give W

        def stat(sums: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            return welch_statistic(sums, n_s)
    else:
        attributes = v[None, :]
        s2 = (float(total) * mean) ** 2 / total

        def stat(sums: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:  # H
            return np.asarray((total - 1) * ((sums[..., 0, :] ** 2 / n_s).sum(axis=-1) - s2) / sst)

    observed = float(stat(attributes @ c))
    table = sps.random_table(n_j, n_s, seed=np.random.default_rng(seed))
    at_least, done = 0, 0
    while done < resamples:
        size = min(_BATCH, resamples - done)
        sums = np.einsum("aj,mjs->mas", attributes, table.rvs(size))
        at_least += int(np.count_nonzero(stat(sums) >= observed - TIE_TOLERANCE * abs(observed)))
        done += size
    p_value = (at_least + 1) / (resamples + 1)
    if not studentized:
        return IndependenceTest("case_permutation", observed, p_value)
    asymptotic = float(sps.chi2.sf(observed, c.shape[1] - 1))
    weights = tuple(float(w) for w in n_s**2 / (attributes[1] @ c))
    return IndependenceTest(WELCH_TEST, observed, max(p_value, asymptotic), weights)


def case_variances(
    values: np.ndarray[Any, Any], trials: np.ndarray[Any, Any], cases: np.ndarray[Any, Any], mean: float
) -> np.ndarray[Any, Any]:
    """v(t) of :func:`case_permutation_test` for each row: the variance of the values of cases planning t units.

    ``values[j]`` is held by ``cases[j]`` cases planning ``trials[j]`` units; v(t) is the sample variance
    of the values of every case with t planned units, pooled over the slices, floored at the binomial
    p̄(1 − p̄)/t (``mean`` is p̄).

    Examples
    --------
    >>> import numpy as np
    >>> # Two one-trial cases (0 and 1), two six-trial ones (1/6 and 1/2); p̄ = 5/12.
    >>> v = case_variances(np.array([0.0, 1.0, 1 / 6, 0.5]), np.array([1, 1, 6, 6]), np.array([1, 1, 1, 1]), 5 / 12)
    >>> [round(float(x), 6) for x in v]
    [0.5, 0.5, 0.055556, 0.055556]
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    out = np.empty(values.shape, dtype=np.float64)
    for t in np.unique(trials):
        here = trials == t
        n, y = cases[here].astype(np.float64), values[here]
        total = n.sum()
        centre = float(n @ y) / total
        sample = float(n @ (y - centre) ** 2) / (total - 1) if total > 1 else 0.0
        out[here] = max(sample, mean * (1.0 - mean) / float(t))
    return out


def welch_statistic(sums: np.ndarray[Any, Any], n_s: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """W = Σ_s w_s (ȳ_s − ȳ_w)², w_s = n_s² / Σ_(i in s) v(t_i), from per-slice sums (Σ y, Σ v(t)).

    See :func:`case_permutation_test`; ``sums[..., 0, :]`` are the slices' sums of values,
    ``sums[..., 1, :]`` their sums of :func:`case_variances`.
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    weights = n_s**2 / sums[..., 1, :]
    means = sums[..., 0, :] / n_s
    pooled = (weights * means).sum(axis=-1, keepdims=True) / weights.sum(axis=-1, keepdims=True)
    return np.asarray((weights * (means - pooled) ** 2).sum(axis=-1))


def independence_test(table: np.ndarray[Any, Any]) -> IndependenceTest:
    """Test whether the missing/present split of *units* is independent of the slice.

    ``table`` has one row per slice value and two columns (missing,
    present). Slices with no units are dropped. This is a unit-level test:
    :func:`missingness_tests` tests cases instead (see
    :func:`case_permutation_test`). The test is chosen by the table, never by
    the result:

    * fewer than two slice values, or nothing (or everything) missing:
      ``none`` (no test possible, p-value null);
    * 2×2: Fisher's exact test (Fisher 1922, "On the interpretation of χ²
      from contingency tables, and the calculation of P", JRSS 85(1):87–94);
    * every expected count ≥ 5: Pearson's chi-square test of independence
      (Pearson 1900, Phil. Mag. 50(302):157–175), no continuity correction;
    * otherwise ``permutation_chi_square``: Pearson's statistic referred to
      :data:`MONTE_CARLO_RESAMPLES` seeded random tables with the same
      margins, ties counted (see :func:`case_permutation_test`, whose
      statistic is (N − 1)/N times Pearson's on a 0/1 value).

    Examples
    --------
    >>> import numpy as np
    >>> r = independence_test(np.array([[5, 0], [0, 5]]))
    >>> (r.test, round(r.p_value, 6))
    ('fisher_exact', 0.007937)
    >>> independence_test(np.array([[1, 4], [1, 4], [1, 4]]))  # every table ties or is more extreme: p = 1
    IndependenceTest(test='permutation_chi_square', statistic=0.0, p_value=1.0)
    """
    import numpy as np  # imported on use: `import evalframe` does not need it
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
    perm = case_permutation_test(t.T, np.array([1.0, 0.0]), studentized=False)
    return IndependenceTest("permutation_chi_square", float(chi.statistic), perm.p_value)


def detectable_shift(weights: Sequence[float], level: float, power: float = 0.8) -> float:
    """The shift of one slice's mean ungraded share that Welch's W detects with ``power`` at ``level``.

    Under an alternative where slice s's mean differs by d from the other
    slices' common mean, W is approximately noncentral χ²(S − 1) with
    noncentrality λ = d² / (1/w_s + 1/Σ_(r≠s) w_r) (Welch 1951, the
    weights of :func:`case_permutation_test`). With λ* the noncentrality at
    which P(χ²(S − 1, λ*) > the χ²(S − 1) critical value at ``level``) =
    ``power`` (Patnaik 1949, "The non-central χ² and F-distributions and
    their applications", Biometrika 36(1/2):202–232, for the distribution),
    the detectable shift in slice s is √(λ* (1/w_s + 1/Σ_(r≠s) w_r)); the
    one returned is the largest over the slices, so a shift that large in
    any one slice is detected with at least ``power`` (approximately: the
    weights are the observed ones, and the permutation p-value is not the
    χ² one). :func:`missingness_tests` calls it at the Bonferroni level
    α/m, the level Holm's procedure applies to the smallest of m p-values.

    Examples
    --------
    >>> # Two slices of 30 cases, shares of variance 0.1: w = 300 each; (1.96 + 0.84)·√(2·0.1/30) ≈ 0.229.
    >>> round(detectable_shift([300.0, 300.0], 0.05), 4)
    0.2287
    """
    import numpy as np  # imported on use: `import evalframe` does not need it
    from scipy import optimize
    from scipy import stats as sps  # imported on use: scipy is slow to import

    w = np.asarray(weights, dtype=np.float64)
    df = w.size - 1
    if level >= power:  # the test rejects with probability level ≥ power without any shift
        return 0.0
    critical = float(sps.chi2.isf(level, df))
    lam = optimize.brentq(lambda nc: float(sps.ncx2.sf(critical, df, nc)) - power, 1e-9, 1e4)
    spread = 1.0 / w + 1.0 / (w.sum() - w)
    return float(np.sqrt(lam * spread.max()))


def detectable_words(detectable: float | None) -> str:
    """What a test that flagged nothing could have seen, in words (see :func:`detectable_shift`).

    Examples
    --------
    >>> detectable_words(0.2287)
    'would detect a 22.9-point shift in one slice (80% power)'
    >>> detectable_words(1.3)
    'too few cases to detect even a whole slice lost'
    """
    if detectable is None:
        return "no test"
    if detectable > 1:
        return "too few cases to detect even a whole slice lost"
    return f"would detect a {100 * detectable:.1f}-point shift in one slice (80% power)"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the given order.

    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)) over the ordered p-values;
    rejecting every hypothesis with p̃ ≤ α keeps the family-wise error rate
    at most α under any dependence between the tests (Holm 1979, "A simple
    sequentially rejective multiple test procedure", Scand. J. Statist.
    6(2):65–70).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


#: ``missingness_tests`` columns of each test: (ungraded test suffix "_ungraded", missing test no suffix).
_KINDS: Final = ((UNGRADED, "_ungraded"), (MISSING, ""))


def _stands_out(values: list[str | None], units: np.ndarray[Any, Any], planned: np.ndarray[Any, Any]) -> list[str]:
    """Slices whose rate is at least twice the overall rate, else those with the highest rate (non-null only)."""
    rate = units / planned
    overall = units.sum() / planned.sum()
    chosen = rate >= 2 * overall
    if not chosen.any():
        chosen = rate == rate.max()
    return sorted(str(v) for v, c in zip(values, chosen, strict=True) if c and v is not None)


def missingness_tests(
    cases: pl.DataFrame, *, alpha: float = 0.05, resamples: int = MONTE_CARLO_RESAMPLES, seed: int = 0
) -> pl.DataFrame:
    """Test, per (candidate, slice column), whether ungraded and missing units depend on the slice.

    Two tests per (candidate, slice column), each a :func:`case_permutation_test`
    with cases as the units (trials of a case are not independent) and every
    case weighted once, whatever its planned units: does the slices' mean
    share per case of *ungraded* units (ungraded / planned units: no row,
    execution failure, grader failure, ...) differ, and does their mean share
    of *missing* units (no row at all)? The variance of a slice's mean
    comes from its cases' planned units, so cases with more trials (more
    chances of some unit missing) do not make a slice look selective. Cases
    without a slice value form a slice of their own. All the
    audit's p-values — both tests, every slice column, every candidate — are
    adjusted together by Holm's step-down procedure (Holm 1979, "A simple
    sequentially rejective multiple test procedure", Scand. J. Statist.
    6(2):65–70; see :func:`holm`), so that under a case-level
    missing-at-random null the chance that an audit flags anything is at
    most ``alpha``. When a candidate's ungraded units are exactly its missing
    ones in every case, the two tests are one test and count once.

    Parameters
    ----------
    cases
        Output of :func:`case_slices` (every candidate of the audit).
    alpha
        Family-wise significance level (default 0.05).
    resamples, seed
        Permutations per test and their seed (each test starts from ``seed``).

    Returns
    -------
    polars.DataFrame
        One row per (candidate, slice_column), sorted: ``n_slices``,
        ``cases``, ``planned``, ``ungraded``, ``missing`` (Int64, totals over
        the slice values), ``correction`` (``"holm"``), and for each test —
        ``_ungraded`` suffix for ungraded units, no suffix for missing ones —
        ``test`` (String: ``welch_permutation``, or ``none`` when nothing
        varies), ``statistic`` (Welch's W), ``p_value`` (Float64,
        unadjusted) and ``p_adjusted`` (Float64, Holm-adjusted; all null
        without a test), ``selective`` (Boolean: p_adjusted ≤ alpha),
        ``stands_out`` (List[String]; empty unless selective: the slice
        values whose rate is at least twice the candidate's overall rate or,
        when none is, those with the highest rate) and ``detectable``
        (Float64: the shift of one slice's mean share that the test detects
        with 80% power at alpha / the number of tests, the largest over the
        slices, see :func:`detectable_shift`; null without a test).

    Examples
    --------
    >>> from evalframe.slices.breakdown import case_slices
    >>> units = pl.DataFrame({"candidate": ["A"] * 20, "case_id": [f"c{i}" for i in range(20)],
    ...     "case_type": ["x"] * 10 + ["y"] * 10, "outcome": ["exec_failed"] * 8 + ["passed"] * 12})
    >>> t = missingness_tests(case_slices(units, ["case_type"]))
    >>> t.select("ungraded", "p_value_ungraded", "selective_ungraded", "stands_out_ungraded", "missing", "test")
    shape: (1, 6)
    ┌──────────┬──────────────────┬────────────────────┬─────────────────────┬─────────┬──────┐
    │ ungraded ┆ p_value_ungraded ┆ selective_ungraded ┆ stands_out_ungraded ┆ missing ┆ test │
    │ ---      ┆ ---              ┆ ---                ┆ ---                 ┆ ---     ┆ ---  │
    │ i64      ┆ f64              ┆ bool               ┆ list[str]           ┆ i64     ┆ str  │
    ╞══════════╪══════════════════╪════════════════════╪═════════════════════╪═════════╪══════╡
    │ 8        ┆ 0.001            ┆ true               ┆ ["x"]               ┆ 0       ┆ none │
    └──────────┴──────────────────┴────────────────────┴─────────────────────┴─────────┴──────┘
    """
    if cases.is_empty():
        return pl.DataFrame(schema=_TESTS_SCHEMA)
    key = [CANDIDATE, SLICE_COLUMN, SLICE_VALUE, PLANNED, UNGRADED, MISSING]
    cases = cases.group_by(key).agg(pl.col(CASES).sum()).sort(key, nulls_last=True)
    rows = [
        _tests_of(cand, col, group, resamples=resamples, seed=seed)
        for (cand, col), group in cases.group_by(CANDIDATE, SLICE_COLUMN, maintain_order=True)
    ]
    _adjust(rows, alpha)
    return pl.DataFrame(rows, schema=_TESTS_SCHEMA).sort(CANDIDATE, SLICE_COLUMN)


def _tests_schema() -> pl.Schema:
    """The columns of :func:`missingness_tests`, in order."""
    columns: dict[str, pl.DataType] = {
        CANDIDATE: pl.String(),
        SLICE_COLUMN: pl.String(),
        "n_slices": pl.Int64(),
        CASES: pl.Int64(),
        PLANNED: pl.Int64(),
        UNGRADED: pl.Int64(),
        MISSING: pl.Int64(),
        "correction": pl.String(),
    }
    for _, sfx in _KINDS:
        columns |= {
            f"test{sfx}": pl.String(),
            f"statistic{sfx}": pl.Float64(),
            f"p_value{sfx}": pl.Float64(),
            f"p_adjusted{sfx}": pl.Float64(),
            f"selective{sfx}": pl.Boolean(),
            f"stands_out{sfx}": pl.List(pl.String),
            f"detectable{sfx}": pl.Float64(),
        }
    return pl.Schema(columns)


_TESTS_SCHEMA: Final = _tests_schema()


def _tests_of(cand: str, col: str, group: pl.DataFrame, *, resamples: int, seed: int) -> dict[str, Any]:
    """One (candidate, slice column)'s row: totals and both unadjusted tests, with the slices that stand out.

    ``_same`` notes that the ungraded units are exactly the missing ones in every case: the missing test
    is then the ungraded one (tested and counted in the family once); ``_stands*`` the slices that stand
    out, kept only for a flagged test (see :func:`_adjust`).
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    planned, n = (group.get_column(c).to_numpy().astype(np.int64) for c in (PLANNED, CASES))
    slice_values: list[str | None] = group.get_column(SLICE_VALUE).to_list()
    labels = list(dict.fromkeys(slice_values))  # in order; None (cases without a value) is a slice too
    slice_index = np.array([labels.index(v) for v in slice_values], dtype=np.int64)
    same = bool(np.array_equal(group.get_column(UNGRADED).to_numpy(), group.get_column(MISSING).to_numpy()))
    row: dict[str, Any] = {
        CANDIDATE: cand,
        SLICE_COLUMN: col,
        "n_slices": len(labels),
        CASES: int(n.sum()),
        PLANNED: int((planned * n).sum()),
        "correction": CORRECTION,
        "_same": same,
    }
    for kind, sfx in _KINDS:
        count = group.get_column(kind).to_numpy().astype(np.int64)
        row[kind] = int((count * n).sum())
        pairs, pair_index = np.unique(np.column_stack([count, planned]), axis=0, return_inverse=True)
        table = np.zeros((pairs.shape[0], len(labels)), dtype=np.int64)
        np.add.at(table, (pair_index.reshape(-1), slice_index), n)
        values, trials = pairs[:, 0] / pairs[:, 1], pairs[:, 1]
        if same and kind == MISSING:  # the same test on the same fractions
            result = IndependenceTest(
                row["test_ungraded"], row["statistic_ungraded"], row["p_value_ungraded"], row["_weights_ungraded"]
            )
        else:
            result = case_permutation_test(table, values, trials=trials, resamples=resamples, seed=seed)
        units_by_slice = np.bincount(slice_index, weights=count * n, minlength=len(labels))
        planned_by_slice = np.bincount(slice_index, weights=planned * n, minlength=len(labels))
        row |= {
            f"test{sfx}": result.test,
            f"statistic{sfx}": result.statistic,
            f"p_value{sfx}": result.p_value,
            f"_weights{sfx}": result.weights,
            f"_stands{sfx}": _stands_out(labels, units_by_slice, planned_by_slice),
        }
    return row


def _adjust(rows: list[dict[str, Any]], alpha: float) -> None:
    """Holm-adjust every distinct test of ``rows`` as one family; mark and name the selective ones (in place)."""
    family = [
        (i, sfx)
        for i, row in enumerate(rows)
        for kind, sfx in _KINDS
        if row[f"p_value{sfx}"] is not None and not (row["_same"] and kind == MISSING)
    ]
    adjusted = holm([rows[i][f"p_value{sfx}"] for i, sfx in family])
    for (i, sfx), p in zip(family, adjusted, strict=True):
        rows[i][f"p_adjusted{sfx}"] = p
    level = alpha / max(len(family), 1)  # Holm's first step: Bonferroni over the family
    for row in rows:
        if row.pop("_same") and row["p_value"] is not None:  # the missing test is the ungraded one
            row["p_adjusted"] = row["p_adjusted_ungraded"]
        for _, sfx in _KINDS:
            weights = row.pop(f"_weights{sfx}")
            row[f"detectable{sfx}"] = None if weights is None else detectable_shift(weights, level)
            adjusted_p = row.setdefault(f"p_adjusted{sfx}", None)
            row[f"selective{sfx}"] = adjusted_p is not None and adjusted_p <= alpha
            stands = row.pop(f"_stands{sfx}")
            row[f"stands_out{sfx}"] = stands if row[f"selective{sfx}"] else []


def _flag_text(row: Mapping[str, Any]) -> list[str]:
    """The clauses naming where a (candidate, slice column)'s flagged units concentrate."""

    def where(stands: list[str]) -> str:
        return ", ".join(stands) if stands else f"the cases without a {row[SLICE_COLUMN]} value"

    def holm_p(p: float) -> str:
        return f"Holm-adjusted p={p:.2g}"

    col = row[SLICE_COLUMN]
    ungraded, missing = row["selective_ungraded"], row["selective"]
    if ungraded and missing and row[UNGRADED] == row[MISSING]:
        return [
            f"{col}: ungraded units, all of them absent rows, concentrate in {where(row['stands_out'])} "
            f"({holm_p(row['p_adjusted'])})"
        ]
    clauses = []
    if ungraded:
        clauses.append(
            f"{col}: ungraded units concentrate in {where(row['stands_out_ungraded'])} "
            f"({holm_p(row['p_adjusted_ungraded'])})"
        )
    if missing:
        clauses.append(f"{col}: absent rows concentrate in {where(row['stands_out'])} ({holm_p(row['p_adjusted'])})")
    return clauses


def selective_flag(tests: pl.DataFrame) -> pl.DataFrame:
    """One row per candidate with a flagged test: ``selective_missingness`` (String) for the summary.

    The text names, per slice column, which units concentrate (ungraded
    units, absent rows) in which slices, with the Holm-adjusted p-value
    (Holm 1979; see :func:`missingness_tests`); clauses are joined by ``"; "``.
    It names a slice only for a flagged test, and always names one when a
    test is flagged.

    Examples
    --------
    >>> from evalframe.slices.breakdown import case_slices
    >>> units = pl.DataFrame({"candidate": ["A"] * 20, "case_id": [f"c{i}" for i in range(20)],
    ...     "case_type": ["x"] * 10 + ["y"] * 10, "outcome": ["missing"] * 8 + ["passed"] * 12})
    >>> selective_flag(missingness_tests(case_slices(units, ["case_type"]))).item(0, 1)
    'case_type: ungraded units, all of them absent rows, concentrate in x (Holm-adjusted p=0.001)'
    """
    texts: dict[str, list[str]] = {}
    for row in tests.iter_rows(named=True) if not tests.is_empty() else ():
        clauses = _flag_text(row)
        if clauses:
            texts.setdefault(row[CANDIDATE], []).extend(clauses)
    return pl.DataFrame(
        {CANDIDATE: list(texts), "selective_missingness": ["; ".join(t) for t in texts.values()]},
        schema={CANDIDATE: pl.String, "selective_missingness": pl.String},
    )

"""Trial-aware flips: per case, each side's passes over its scored trials, a per-case exact test, a class (SPEC §6c).

A case flips between baseline and candidate only when its trials say so. Each side's ``k/n`` counts its
passes ``k`` over its scored trials ``n`` (a trial the grader could not grade, or that never ran, is not
in ``n``: missing is not failure). Fisher's exact test on the 2×2 table of the two sides' passes and
fails gives a p-value per case, adjusted by Holm's procedure across the cases whose trials could show a
difference; a case is ``fixed`` or ``regressed`` only when the adjusted p-value is below ``alpha``, and
``flaky`` when its sides differ, or either side is mixed, without that. A side with no scored trial makes
the case ``incomparable``, never ``regressed``. Used by :func:`evalframe.compare.compare`.
"""

from __future__ import annotations

from functools import cache
from typing import Final

import polars as pl

from evalframe.columns import CASE_ID, FLIP_CLASS, FLIP_CLASSES, TASK
from evalframe.natural import natural_key
from evalframe.slices import holm

#: The count columns of :func:`classify_cases`' input, each side's passes and scored trials.
COUNTS: Final = ("baseline_k", "baseline_n", "candidate_k", "candidate_n")


@cache
def fisher_p(baseline_k: int, baseline_n: int, candidate_k: int, candidate_n: int) -> float:
    """Two-sided p-value of Fisher's exact test of equal pass rates on the 2×2 table of passes and fails.

    The table is ``[[baseline_k, baseline_n − baseline_k], [candidate_k, candidate_n − candidate_k]]``;
    conditional on its margins the passes follow a hypergeometric law, and the p-value sums the
    probabilities of the tables no more likely than the one seen (Fisher 1922, "On the interpretation of
    χ² from contingency tables, and the calculation of P", J. R. Statist. Soc. 85(1):87–94;
    ``scipy.stats.fisher_exact``). A table whose margins allow one table only (every trial passed, or
    every one failed) has p = 1.

    Examples
    --------
    >>> round(fisher_p(6, 10, 4, 10), 6)
    0.656282
    >>> fisher_p(1, 1, 0, 1)
    1.0
    >>> round(fisher_p(4, 4, 0, 4), 6)
    0.028571
    """
    from scipy import stats as sps  # imported on use: scipy is slow to import

    table = [[baseline_k, baseline_n - baseline_k], [candidate_k, candidate_n - candidate_k]]
    return min(1.0, float(sps.fisher_exact(table).pvalue))


def smallest_p(baseline_n: int, candidate_n: int) -> float:
    """The smallest p-value :func:`fisher_p` can give a case with these scored trials per side.

    It is that of the most extreme table, every trial passing on one side and failing on the other. A
    single trial per side gives 1: one trial per side can never show a case fixed or regressed.

    Examples
    --------
    >>> smallest_p(1, 1), round(smallest_p(3, 3), 6), round(smallest_p(10, 10), 8)
    (1.0, 0.1, 1.083e-05)
    """
    return fisher_p(baseline_n, baseline_n, 0, candidate_n)


def classify_cases(counts: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """Each case's p-value, Holm-adjusted p-value and class from each side's passes over its scored trials.

    Parameters
    ----------
    counts
        One row per case: ``case_id`` (String), ``baseline_k``, ``baseline_n``, ``candidate_k``,
        ``candidate_n`` (integers: passes ``k`` over scored trials ``n``, ``0 ≤ k ≤ n``).
    alpha
        Family-wise error rate of the Holm-adjusted tests across cases.

    Returns
    -------
    polars.DataFrame
        ``counts`` in its row order with ``p_value`` and ``p_holm`` (Float64, null for an incomparable
        case), ``flip_class`` (String, one of :data:`evalframe.columns.FLIP_CLASSES`) and
        ``incomparable_side`` (String: ``baseline``, ``candidate`` or ``both``, the side with no scored
        trial; null for a comparable case). The classes:

        * ``incomparable``: a side has no scored trial (``n = 0``), so nothing says the case changed;
        * ``stable_pass`` / ``stable_fail``: every scored trial of both sides passed / failed (p = 1);
        * ``fixed`` / ``regressed``: ``p_holm < alpha`` and the candidate's pass rate ``k/n`` is above /
          below the baseline's;
        * ``flaky``: any other case: the sides differ without significance, or both are mixed alike.

    Notes
    -----
    ``p_value`` is Fisher's exact test (:func:`fisher_p`). Holm's step-down procedure (Holm 1979, "A
    simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2):65–70;
    :func:`evalframe.slices.holm`) adjusts across the comparable cases that are neither stable pass nor
    stable fail. A stable case's margins allow a single table, so its test has p = 1 whatever the rates
    (a degenerate conditional law) and leaving it out of the family keeps the family-wise error at most
    ``alpha``; its ``p_holm`` is 1. Under no true change in any case, the chance that any case is
    classed ``fixed`` or ``regressed`` is thus at most ``alpha``. A case can be significant only when
    :func:`smallest_p` of its trials is below ``alpha``: never with one trial per side (1/1 vs 0/1 has
    p = 1, so it is ``flaky``), and with ``alpha`` 0.05 not before 4 scored trials per side.

    Examples
    --------
    >>> counts = pl.DataFrame({"case_id": ["a", "b", "c", "d", "e"], "baseline_k": [6, 10, 0, 10, 2],
    ...     "baseline_n": [10, 10, 10, 10, 3], "candidate_k": [4, 10, 0, 0, 0], "candidate_n": [10, 10, 10, 10, 0]})
    >>> classify_cases(counts).select("case_id", "p_value", "p_holm", "flip_class", "incomparable_side")
    shape: (5, 5)
    ┌─────────┬──────────┬──────────┬──────────────┬───────────────────┐
    │ case_id ┆ p_value  ┆ p_holm   ┆ flip_class   ┆ incomparable_side │
    │ ---     ┆ ---      ┆ ---      ┆ ---          ┆ ---               │
    │ str     ┆ f64      ┆ f64      ┆ str          ┆ str               │
    ╞═════════╪══════════╪══════════╪══════════════╪═══════════════════╡
    │ a       ┆ 0.656282 ┆ 0.656282 ┆ flaky        ┆ null              │
    │ b       ┆ 1.0      ┆ 1.0      ┆ stable_pass  ┆ null              │
    │ c       ┆ 1.0      ┆ 1.0      ┆ stable_fail  ┆ null              │
    │ d       ┆ 0.000011 ┆ 0.000022 ┆ regressed    ┆ null              │
    │ e       ┆ null     ┆ null     ┆ incomparable ┆ candidate         │
    └─────────┴──────────┴──────────┴──────────────┴───────────────────┘
    """
    bk, bn, ck, cn = (counts.get_column(c).cast(pl.Int64).to_list() for c in COUNTS)
    p: list[float | None] = [None] * counts.height
    klass: list[str] = ["incomparable"] * counts.height
    side: list[str | None] = [None] * counts.height
    family: list[int] = []
    family_p: list[float] = []
    for i, (b_k, b_n, c_k, c_n) in enumerate(zip(bk, bn, ck, cn, strict=True)):
        if b_n == 0 or c_n == 0:
            side[i] = "both" if b_n == c_n else ("baseline" if b_n == 0 else "candidate")
            continue
        p[i] = fisher_p(b_k, b_n, c_k, c_n)
        if b_k == b_n and c_k == c_n:
            klass[i] = "stable_pass"
        elif b_k == 0 and c_k == 0:
            klass[i] = "stable_fail"
        else:
            family.append(i)
            family_p.append(p[i])  # type: ignore[arg-type]
    adjusted: list[float | None] = [None if v is None else 1.0 for v in p]
    for i, q in zip(family, holm(family_p), strict=True):
        adjusted[i] = q
        up = ck[i] * bn[i] > bk[i] * cn[i]
        down = ck[i] * bn[i] < bk[i] * cn[i]
        klass[i] = "fixed" if q < alpha and up else "regressed" if q < alpha and down else "flaky"
    return counts.with_columns(
        pl.Series("p_value", p, pl.Float64),
        pl.Series("p_holm", adjusted, pl.Float64),
        pl.Series(FLIP_CLASS, klass, pl.String),
        pl.Series("incomparable_side", side, pl.String),
    )


def case_flips(pairs: pl.DataFrame, *, alpha: float = 0.05) -> pl.DataFrame:
    """The trial-aware flips of a comparison's pairs: one row per case, its counts, p-values and class.

    Parameters
    ----------
    pairs
        :attr:`evalframe.compare.Comparison.pairs`: one row per (case_id, trial) planned for both
        sides, with ``baseline_outcome`` and ``candidate_outcome`` (String, pass/fail outcomes, not
        numeric scores without a threshold) and ``baseline_graded`` and ``candidate_graded`` (Boolean).
    alpha
        Family-wise error rate of the Holm-adjusted tests across cases (see :func:`classify_cases`).

    Returns
    -------
    polars.DataFrame
        One row per case in natural case order: ``case_id`` (String), ``baseline_k``, ``baseline_n``,
        ``candidate_k``, ``candidate_n`` (UInt32: passes over scored trials, per side), then the columns
        :func:`classify_cases` adds. A trial ungraded on one side still counts in the other side's
        ``n``: each side is judged on its own scored trials.

    Examples
    --------
    >>> pairs = pl.DataFrame({"case_id": ["q", "q", "r", "r"], "trial": [1, 2, 1, 2],
    ...     "baseline_outcome": ["passed", "passed", "failed", "passed"],
    ...     "candidate_outcome": ["failed", "passed", "missing", "exec_failed"]}).with_columns(
    ...     pl.col(f"{s}_outcome").is_in(["passed", "failed"]).alias(f"{s}_graded")
    ...     for s in ("baseline", "candidate"))
    >>> case_flips(pairs).select("case_id", *COUNTS, "flip_class", "incomparable_side").rows()
    [('q', 2, 2, 1, 2, 'flaky', None), ('r', 1, 2, 0, 0, 'incomparable', 'candidate')]
    """

    def side(name: str) -> list[pl.Expr]:
        passed = (pl.col(f"{name}_outcome") == "passed") & pl.col(f"{name}_graded")
        return [
            passed.sum().cast(pl.UInt32).alias(f"{name}_k"),
            pl.col(f"{name}_graded").sum().cast(pl.UInt32).alias(f"{name}_n"),
        ]

    counts = pairs.group_by(CASE_ID).agg(*side("baseline"), *side("candidate")).select(CASE_ID, *COUNTS)
    order = sorted(range(counts.height), key=lambda i: natural_key(counts.item(i, CASE_ID)))
    return classify_cases(counts[order], alpha=alpha)


def flip_counts(flips: pl.DataFrame) -> dict[str, int]:
    """Cases per class of :data:`evalframe.columns.FLIP_CLASSES` (every class, zero included), in that order.

    Examples
    --------
    >>> flip_counts(pl.DataFrame({"flip_class": ["flaky", "stable_pass", "flaky"]}))
    {'stable_pass': 1, 'stable_fail': 0, 'fixed': 0, 'regressed': 0, 'flaky': 2, 'incomparable': 0}
    """
    seen = dict(flips.get_column(FLIP_CLASS).value_counts().iter_rows()) if flips.height else {}
    return {k: int(seen.get(k, 0)) for k in FLIP_CLASSES}


def flips_note(flips: pl.DataFrame, *, alpha: float = 0.05) -> str | None:
    """Why no case could be classed fixed or regressed, when the trials themselves rule it out; else None.

    A case can be significant only when the smallest p-value its scored trials allow (:func:`smallest_p`)
    is below ``alpha``. When that holds for no comparable case, the note says so: a comparison of
    single trials cannot show a regression, whatever it looks like.

    Examples
    --------
    >>> one = pl.DataFrame({"baseline_n": [1, 1], "candidate_n": [1, 0]})
    >>> print(flips_note(one))
    no case can be classed fixed or regressed: with 1 scored trial per side the smallest p-value of
    Fisher's exact test is 1 (not below alpha 0.05); a single trial per side cannot show a regression,
    so a pass that became a fail is flaky
    >>> flips_note(pl.DataFrame({"baseline_n": [4], "candidate_n": [4]})) is None
    True
    """
    sizes = flips.filter((pl.col("baseline_n") > 0) & (pl.col("candidate_n") > 0)).select("baseline_n", "candidate_n")
    if sizes.height == 0:
        return None
    pairs = set(sizes.iter_rows())
    least = min(smallest_p(int(b), int(c)) for b, c in pairs)
    if least < alpha:
        return None
    most = max(max(int(b), int(c)) for b, c in pairs)
    trials = "1 scored trial" if most == 1 else f"at most {most} scored trials"
    single = (
        "; a single trial per side cannot show a regression, so a pass that became a fail is flaky" if most == 1 else ""
    )
    return (
        f"no case can be classed fixed or regressed: with {trials} per side the smallest p-value of Fisher's "
        f"exact test is {least:.3g} (not below alpha {alpha:g}){single}"
    )


def comparison_flips(
    pairs: pl.DataFrame, *, alpha: float, numeric: bool, task: str | None = None
) -> tuple[pl.DataFrame, str | None]:
    """A comparison's flips and their note: :func:`case_flips` of its pairs, with ``task`` first when named.

    Empty (and no note) for numeric scores without a pass threshold, which have no passes to count.

    Examples
    --------
    >>> pairs = pl.DataFrame({"case_id": ["q"], "trial": [1], "baseline_outcome": ["passed"],
    ...     "candidate_outcome": ["failed"], "baseline_graded": [True], "candidate_graded": [True]})
    >>> flips, note = comparison_flips(pairs, alpha=0.05, numeric=False, task="belief")
    >>> flips.select("task", "case_id", "flip_class").rows(), note[:45]
    ([('belief', 'q', 'flaky')], 'no case can be classed fixed or regressed: wi')
    """
    if numeric:
        return pl.DataFrame(), None
    flips = case_flips(pairs, alpha=alpha)
    note = flips_note(flips, alpha=alpha)
    if task is not None:
        flips = flips.select(pl.lit(task, pl.String).alias(TASK), pl.all())
    return flips, note

"""The checks of an audit's options, made before any file is read: one rule each, for ``ef.audit`` and the CLI.

:func:`check_options` raises :class:`~evalframe.errors.OptionError` naming the keyword argument at fault;
``ef.audit`` calls it first, and ``evalframe audit`` / ``compare`` call it on their flags before reading
the plan, reporting the same words as a usage error. :func:`check_slices` needs the plan's columns.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import get_args

from evalframe.columns import CASE_ID, TASK, GradeKind, MissingPolicy, RetryPolicyName
from evalframe.compare.pairs import check_cases
from evalframe.errors import OptionError
from evalframe.stats import DEFAULT_CONFIDENCE, check_confidence
from evalframe.stats.detectable import check_range


def check_options(
    *,
    retry: str = "first",
    missing: str = "report",
    grade: str = "binary",
    max_attempts: int | None = None,
    score_range: tuple[float, float] = (0.0, 1.0),
    pass_threshold: float | None = None,
    slices: Sequence[str] = (),
    bins: Collection[str] = (),
    cases: str = "sample",
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = 0.05,
) -> None:
    """Refuse an option outside its values, or options that contradict each other (see :func:`evalframe.audit`).

    Parameters
    ----------
    retry, missing, grade, max_attempts, score_range, pass_threshold, slices
        As :func:`evalframe.audit` takes them.
    bins
        The columns given bins (the keys of ``bins``): each must be a slice.
    cases
        What the inference is about: ``sample`` or ``fixed`` (see :func:`evalframe.compare`).
    confidence, alpha
        The intervals' coverage and the slice tests' level, each strictly between 0 and 1.

    Raises
    ------
    evalframe.errors.OptionError
        The first option at fault, and why.

    Examples
    --------
    >>> check_options(grade="numeric", score_range=(0, 10), pass_threshold=8)
    >>> try:
    ...     check_options(pass_threshold=0.5)
    ... except OptionError as exc:
    ...     print(exc.option, "|", exc.reason[-28:])
    pass_threshold | got 0.5 with grade='binary'
    """
    for name, value, allowed in (
        ("retry", retry, get_args(RetryPolicyName)),
        ("missing", missing, get_args(MissingPolicy)),
        ("grade", grade, get_args(GradeKind)),
    ):
        if value not in allowed:
            raise OptionError(name, f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    check_cases(cases)
    check_confidence(confidence)
    check_range("alpha", alpha, 0.0, 1.0)
    if max_attempts is not None and max_attempts < 1:
        raise OptionError("max_attempts", f"max_attempts must be at least 1 (or no limit), got {max_attempts!r}")
    low, high = score_range
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        reason = f"score_range must be finite (low, high) with low < high, got {tuple(score_range)!r}"
        raise OptionError("score_range", reason)
    if pass_threshold is not None and not (grade == "numeric" and low <= pass_threshold <= high):
        reason = f"pass_threshold applies to grade='numeric' only, within score_range {tuple(score_range)!r}"
        raise OptionError("pass_threshold", f"{reason}; got {pass_threshold!r} with grade={grade!r}")
    if CASE_ID in slices:
        raise OptionError("slices", "case_id is the unit's identity, not a slice")
    repeated = sorted({c for c in slices if list(slices).count(c) > 1})
    if repeated:
        raise OptionError("slices", f"slice column(s) {', '.join(map(repr, repeated))} given more than once")
    unsliced = sorted(set(bins) - set(slices))
    if unsliced:
        raise OptionError("bins", f"bins given for {', '.join(map(repr, unsliced))}, which is not a slice")


def check_slices(slices: Sequence[str], columns: Sequence[str]) -> None:
    """Refuse a slice that is not one of the plan's case columns (``columns``), or that is its tasks.

    Raises
    ------
    evalframe.errors.OptionError
        Naming the slices not in the plan and the columns that are; or ``task``, which is a key of every
        table when the plan has it (SPEC §1), never a slice.

    Examples
    --------
    >>> check_slices(["topic"], ["case_id", "topic"])
    >>> try:
    ...     check_slices(["level"], ["case_id", "topic"])
    ... except OptionError as exc:
    ...     print(exc)
    slice column(s) 'level' not in the plan (plan columns: topic)
    >>> try:
    ...     check_slices(["task"], ["case_id", "task"])
    ... except OptionError as exc:
    ...     print(exc.option, "|", exc.reason)
    slices | slices=['task']: tasks are keys, not slices; every table is already per (task, candidate)
    """
    if TASK in slices and TASK in columns:
        reason = "slices=['task']: tasks are keys, not slices; every table is already per (task, candidate)"
        raise OptionError("slices", reason)
    unknown = [c for c in slices if c not in columns]
    if unknown:
        usable = ", ".join(c for c in columns if c != CASE_ID) or "none"
        named = ", ".join(map(repr, unknown))
        raise OptionError("slices", f"slice column(s) {named} not in the plan (plan columns: {usable})")

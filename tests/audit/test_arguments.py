"""An audit option at fault is refused in the same words by ``ef.audit`` and by the command line (issue 39)."""

from __future__ import annotations

from typing import Any

import pytest

import evalframe as ef
from evalframe.errors import OptionError
from tests.cli.support import ORBIT, ORBIT_ARGS, run

PLAN = ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"])

#: (ef.audit keywords, the flags saying the same, the option at fault, its reason).
CASES = [
    ({"retry": "best"}, None, "retry", "retry must be one of 'first', 'last_allowed', 'every', got 'best'"),
    ({"max_attempts": 0}, None, "max_attempts", "max_attempts must be at least 1 (or no limit), got 0"),
    (
        {"grade": "numeric", "score_range": (1.0, 0.0)},
        ["--grade", "numeric", "--score-range", "1", "0"],
        "score_range",
        "score_range must be finite (low, high) with low < high, got (1.0, 0.0)",
    ),
    (
        {"pass_threshold": 0.5},
        ["--pass-threshold", "0.5"],
        "pass_threshold",
        "pass_threshold applies to grade='numeric' only, within score_range (0.0, 1.0); got 0.5 with grade='binary'",
    ),
    (
        {"grade": "numeric", "pass_threshold": 2.0},
        ["--grade", "numeric", "--pass-threshold", "2"],
        "pass_threshold",
        "pass_threshold applies to grade='numeric' only, within score_range (0.0, 1.0); got 2.0 with grade='numeric'",
    ),
    ({"slices": ["case_id"]}, ["--slice", "case_id"], "slices", "case_id is the unit's identity, not a slice"),
    (
        {"slices": ["case_type", "case_type"]},
        ["--slice", "case_type", "--slice", "case_type"],
        "slices",
        "slice column(s) 'case_type' given more than once",
    ),
    (
        {"bins": {"case_type": [0.0, 1.0]}},
        ["--bins", "case_type=0,1"],
        "bins",
        "bins given for 'case_type', which is not a slice",
    ),
    # the levels were checked only when an interval or a test used them (alpha="x" a TypeError, alpha=2 printed)
    ({"alpha": "x"}, None, "alpha", "alpha must be in (0.0, 1.0), got 'x'"),
    ({"alpha": 2}, None, "alpha", "alpha must be in (0.0, 1.0), got 2"),
    ({"confidence": 1.0}, None, "confidence", "confidence must be strictly between 0 and 1, got 1.0"),
]


@pytest.mark.parametrize(("kwargs", "flags", "option", "reason"), CASES, ids=[c[2] for c in CASES])
def test_an_option_at_fault_is_refused_in_the_same_words(
    kwargs: dict[str, Any], flags: list[str] | None, option: str, reason: str
) -> None:
    with pytest.raises(OptionError) as caught:
        ef.audit(PLAN, "no-such-ledger.csv", **kwargs)  # refused before any file is opened
    assert (caught.value.option, caught.value.reason, str(caught.value)) == (option, reason, reason)
    assert isinstance(caught.value, ValueError)
    if flags is None:  # click's Choice / IntRange refuse these flags before the audit is asked
        return
    code, stdout, stderr = run([*ORBIT_ARGS, *flags])
    flag = {"slices": "--slice"}.get(option, "--" + option.replace("_", "-"))
    assert (code, stdout) == (2, "")
    assert stderr.strip().splitlines()[-1] == f"Error: Invalid value for {flag}: {reason}"

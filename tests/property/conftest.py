"""Hypothesis profiles of the fuzz suite (tests/property/test_fuzz.py).

``ci`` (default): a few hundred seeded examples over all attack families. ``fuzz``: the long run by hand,
1,300 examples a test, 11,700 in all (``HYPOTHESIS_PROFILE=fuzz``). Both are derandomized (seeded by the test's
name), so a run is reproducible; only test_fuzz.py applies them, the other property tests keep their own
settings.
"""

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    "database": None,
}
settings.register_profile("ci", max_examples=40, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("fuzz", max_examples=1300, **_COMMON)  # type: ignore[arg-type]

"""pytest configuration: hypothesis profiles.

``HYPOTHESIS_PROFILE`` picks one (default ``ci``): ``ci`` runs the property tests of
``tests/test_robustness_properties.py`` with ``max_examples=1000`` as the unit their per-test
weights scale (over 10,000 examples in all, about a minute on two cores); ``nightly`` runs ten
times as many; ``dev`` a tenth. No deadline (a slow CI machine is not a bug), no example database
(nothing written into the checkout).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", max_examples=1000, **_COMMON)
settings.register_profile("nightly", max_examples=10_000, **_COMMON)
settings.register_profile("dev", max_examples=100, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Keys a killed earlier run left in Redis go first (``tests.blogosphere.sweep_dead_runs``)."""
    from tests.blogosphere import sweep_dead_runs

    sweep_dead_runs()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that leaves test keys in Redis or test databases in MariaDB fails, naming them
    (tests clean up after themselves: ``tests.blogosphere.redis_prefix`` and friends)."""
    from tests.blogosphere import leftovers

    left = leftovers()
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"Left behind by this run ({len(left)}): " + ", ".join(left[:20]))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

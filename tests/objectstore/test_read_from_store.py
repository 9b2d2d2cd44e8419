"""Plans and ledgers read from an S3 server on 127.0.0.1 audit exactly as the same files read locally."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from tests.conftest import FIXTURES
from tests.objectstore.conftest import S3Server

ORBIT = FIXTURES / "orbit_desk"
LEDGER = FIXTURES / "ledger"


def test_orbit_desk_from_the_store_is_the_local_audit(s3: S3Server) -> None:
    plan_url = s3.put("spec/orbit_desk/plan.csv", (ORBIT / "plan.csv").read_bytes())
    results_url = s3.put("spec/orbit_desk/results.csv", (ORBIT / "results.csv").read_bytes())
    local = ef.audit(ef.Plan.from_file(ORBIT / "plan.csv", candidates=["A", "B"]), ORBIT / "results.csv")
    plan = ef.Plan.from_file(plan_url, candidates=["A", "B"], storage_options=s3.options)
    remote = ef.audit(plan, results_url, storage_options=s3.options)
    print(remote.summary)
    assert_frame_equal(remote.summary, local.summary)

"""Every real export that records its own headline: the reconciliation's points sum to its gap (issue 43).

The headline values are read back from each file here (Inspect's ``results.scores`` in the log header)
and compared with what the importer recorded; the decomposition must sum to ``reported −
pass_rate_planned`` within 1e-9 for every one.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import pytest
import zstandard

import evalframe
from evalframe.errors import AuditRefused
from evalframe.funnel.reported import POINTS_COLUMNS, reconciliation
from evalframe.importers import inspect_ai
from evalframe.importers._kit import ImportRefused, ImportUnreadable
from tests.importers.test_every_real_export import ABSENT, COLLECTIONS, export_units

#: Skips when ../shared is absent (see the root conftest.py).
HANDLES_ABSENT_SHARED = True

#: The zip compression method number of zstd (APPNOTE.TXT 4.4.5).
ZSTD = 93
#: The formats whose importer records the export's headline, by folder of ../shared/data/real.
RECORDING = {"inspect_ai": inspect_ai.read}


#: The logs reconciled: those whose header lists an accuracy or mean for the score read, whose audit is not
#: refused and holds a scored unit (each checked by opening the log; the others record no such metric, or
#: are refused, or have no scored sample).
RECONCILED = {
    "real": [
        "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        "2025-05-12T20-28-13-04-00_popularity.json",
        "2025-05-12T20-28-26-04-00_security-guide.json",
        "2025-09-12T11-41-56-04-00_popularity_HdSVrmTDEge636qZ2op64f.eval",
        "2025-09-23T08-09-58-04-00_popularity_DN2wbX2ZvACsBpjwptzBRo.eval",
        "2025-09-23T08-09-58-04-00_security-guide_LuxZJVwvymC3S3SyoJczxB.eval",
        "2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval",
        "data_arc_qwen.json",
        "data_arc_sonnet.json",
        "data_intercode_ctf_local_path.json",
        "data_pubmedqa_gpt4o_mini.json",
        "log_streaming.eval",
        "small.eval",
    ],
    "real2": [
        "2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval",
        "2025-09-15T15-04-34-04-00_popularity_J5EskSJVsBD9iRd47twk8x.eval",
        "2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval",
        "2025-09-15T15-06-47-04-00_popularity_A2Ld8PcXe79grUc5trBXEb.eval",
        "2025-09-15T15-07-04-04-00_popularity_CzDPvkooKpp4d24wMPkx5d.eval",
        "2025-09-15T15-07-21-04-00_popularity_TrR56PVX4fHPUViCDMPg8g.eval",
        "2026-02-20T05-22-33+00-00_starsim-benchmark_24AbBSr25iP6DbfTNwbAUU.eval",
        "2026-02-20T05-28-38+00-00_starsim-benchmark_ZLCP7ftbVUCYkyJGemYV6a.eval",
        "2026-02-25T19-20-10+00-00_starsim-benchmark_hBH4VGrPv22VuJgQXhNSJt.eval",
        "2026-02-25T19-22-25+00-00_starsim-benchmark_mPrWitKNLFZeL9WGpUJ57s.eval",
        "baseline.eval",
        "gVisor-human.eval",
        "kube_eval_MT=PrometheusSetup_ST=K8sNetworkVulnerability_protocol=tm_mode=attack.eval",
        "log_message_deduplication.eval",
        "mmlu-no-summary-choices.eval",
        "test_bash.eval",
    ],
}


def inspect_header(path: Path) -> dict[str, Any]:
    """The log's header as the file holds it (``header.json`` of an ``.eval`` archive, else the JSON log)."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            if "header.json" not in archive.namelist():
                return {}
            info = archive.getinfo("header.json")
            if info.compress_type != ZSTD:
                return dict(json.loads(archive.read(info)))
            with path.open("rb") as raw:  # zipfile cannot inflate zstd: read the member's bytes past its local header
                raw.seek(info.header_offset + 26)
                name_length, extra_length = int.from_bytes(raw.read(2), "little"), int.from_bytes(raw.read(2), "little")
                raw.seek(name_length + extra_length, 1)
                data = zstandard.ZstdDecompressor().decompress(raw.read(info.compress_size), info.file_size)
            return dict(json.loads(data))
    return dict(json.loads(path.read_text()))


def file_headlines(path: Path) -> set[tuple[str, float]]:
    """(metric, value) of every accuracy / mean metric the header's ``results.scores`` lists."""
    scores = (inspect_header(path).get("results") or {}).get("scores") or []
    return {
        (name, float(metric["value"]))
        for entry in scores
        for name, metric in (entry.get("metrics") or {}).items()
        if name in ("accuracy", "mean") and isinstance(metric.get("value"), int | float)
    }


@pytest.mark.parametrize("collection", sorted(COLLECTIONS))
def test_every_recorded_headline_decomposes_exactly(collection: str) -> None:
    root = COLLECTIONS[collection]
    if not root.is_dir():
        pytest.skip(ABSENT)
    reconciled: list[str] = []
    for folder, relative in export_units(collection):
        if folder not in RECORDING:
            continue
        path = root / relative
        try:
            imported = RECORDING[folder]([path])
            report = evalframe.audit(imported.plan, imported.results)
        except (ImportRefused, ImportUnreadable, AuditRefused):
            continue  # refused exports have no rate to reconcile
        table = reconciliation(report.summary, report.meta["exports"], attempts=report.attempts)
        for row in table.iter_rows(named=True):
            assert (row["metric"], row["reported"]) in file_headlines(path), relative
            if row["gap"] is None:
                assert row["scored"] == 0 or row["passed"] is None, relative
                continue
            assert row["gap"] == pytest.approx(row["reported"] - row["pass_rate_planned"], abs=1e-12)
            assert abs(math.fsum(row[c] for c in POINTS_COLUMNS) - row["gap"]) <= 1e-9, relative
            reconciled.append(path.name)
    # The logs whose header lists an accuracy or mean and whose samples hold a scored grade.
    assert sorted(reconciled) == sorted(RECONCILED[collection])

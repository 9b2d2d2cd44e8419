"""``evalframe audit --from FORMAT URL`` and ``ef.read(FORMAT, URL, storage_options=)``: real exports put on an S3
server on 127.0.0.1 audit exactly as the same files read locally (every ``--out`` file, the URL written as the
local path); a missing export, a denied credential and an unreachable endpoint are exit 2, one line naming the URL.

The exports (``../shared/data/real2``, see its SOURCES.md): an Inspect eval set of 3 logs (MIT; 50 rows per
model, ids 1-10 x 5 epochs), an lm-eval output folder (Apache-2.0; results + 3 samples rows) and a promptfoo
export (MIT; 30 rows).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import evalframe as ef
from evalframe.errors import InputFormatError
from tests.cli.support import run
from tests.conftest import REAL2
from tests.objectstore.conftest import (
    SECRET,
    S3Server,
    assert_same_outputs,
    closed_port,
    enforced_auth,
    one_error_line,
    store_args,
)

INSPECT_SET = REAL2 / "inspect_ai/UKGovernmentBEIS-inspect_ai-PR2488/log-sets/set2"
LM_EVAL = REAL2 / "lm_eval/containers-olot/tests/data/lmeh"
PROMPTFOO = REAL2 / "promptfoo/tthatcher95-nicheIQ/promptfoo/results.json"


def audited(fmt: str, export: str, out: Path, *extra: str) -> tuple[int, str, str]:
    return run(["audit", "--from", fmt, export, "--format", "json", "--out", str(out), *extra])


@pytest.mark.parametrize(
    ("fmt", "local", "extra"),
    [
        ("inspect", INSPECT_SET, ()),
        ("inspect", INSPECT_SET / "2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval", ()),
        ("lm-eval", LM_EVAL, ("--score", "exact_match,strict-match")),  # its samples: strict-match only
        ("promptfoo", PROMPTFOO, ()),
    ],
    ids=["inspect-eval-set", "inspect-one-log", "lm-eval-folder", "promptfoo-export"],
)
def test_an_export_audited_from_the_store_is_the_local_audit(
    s3: S3Server, tmp_path: Path, fmt: str, local: Path, extra: tuple[str, ...]
) -> None:
    # The export's local copy and its URL are named by texts of one length: the HTML report shortens long
    # names at a fixed width, so that the two reports differ only in the names.
    bucket, copies = f"s3://evals/from/{fmt}-{tmp_path.name}", tmp_path / "exports"
    pad = max(1, 1 + len(str(copies)) - len(bucket))
    prefix = f"{bucket.removeprefix('s3://evals/')}/{'u' * pad}"
    copy = copies / ("l" * (len(bucket) + pad - len(str(copies)))) / local.name
    copy.parent.mkdir(parents=True)
    if local.is_dir():
        shutil.copytree(local, copy)
        folder = s3.put_tree(local, f"{prefix}/{local.name}")
        url = folder  # no "/": the provenance names the folder as given
    else:
        shutil.copyfile(local, copy)
        url = s3.put(f"{prefix}/{local.name}", local.read_bytes())
    names = {f"s3://evals/{prefix}": str(copy.parent)}  # the parents: a shortened name keeps its start
    assert len(url.rstrip("/")) == len(str(copy))
    code, want, err = audited(fmt, str(copy), tmp_path / "local", *extra)
    assert code == 0, err
    code, got, err = audited(fmt, url, tmp_path / "remote", *extra, *store_args(s3))
    assert code == 0, err
    assert SECRET not in got + err
    assert_same_outputs(tmp_path / "local", tmp_path / "remote", names)
    for url_prefix, path in names.items():
        got = got.replace(url_prefix, path)
    assert got == want
    assert all(SECRET.encode() not in f.read_bytes() for f in (tmp_path / "remote").iterdir())
    # each object fetched once (one GET per export file)
    gets = s3.gets(prefix)
    assert len(gets) == len(set(gets))


def test_read_names_the_url_in_every_row_and_note(s3: S3Server) -> None:
    folder = s3.put_tree(INSPECT_SET, "read/inspect/set2")
    remote = ef.read("inspect", folder + "/", storage_options=s3.options)
    local = ef.read("inspect", INSPECT_SET)
    # SOURCES.md: 3 models x 50 rows (ids 1-10 x epochs 1-5)
    assert remote.ledger.height == local.ledger.height == 150
    sources = set(remote.ledger.get_column("source").to_list())
    assert all(s.startswith(folder + "/2025-09-15T15-04-34-04-00_popularity_") for s in sources), sources
    assert len({s.split(".eval")[0] for s in sources}) == 3
    assert remote.ledger.drop("source").equals(local.ledger.drop("source"))
    units = ["candidate", "case_id", "trial"]  # plan_units joins the case columns: its row order is not kept
    assert remote.plan.sort(units).equals(local.plan.sort(units))


def test_a_missing_export_is_exit_2_naming_the_url(s3: S3Server, tmp_path: Path) -> None:
    url = "s3://evals/from/nothing-here/"
    line = one_error_line(*audited("inspect", url, tmp_path / "out", *store_args(s3)), url)
    assert "no such object or folder in the store" in line
    with pytest.raises(InputFormatError, match="no such object"):
        ef.read("lm-eval", url, storage_options=s3.options)


def test_a_denied_credential_is_exit_2_without_the_secret(s3: S3Server, tmp_path: Path) -> None:
    url = s3.put("from/denied/results.json", PROMPTFOO.read_bytes())
    with enforced_auth(s3):
        code, out, err = audited("promptfoo", url, tmp_path / "out", *store_args(s3))
    line = one_error_line(code, out, err, url)
    assert "access denied" in line


def test_an_unreachable_endpoint_is_exit_2_naming_the_url(s3: S3Server, tmp_path: Path) -> None:
    url = "s3://evals/from/lm-eval/lmeh/"
    code, out, err = audited("lm-eval", url, tmp_path / "out", *store_args(s3, aws_endpoint_url=closed_port()))
    line = one_error_line(code, out, err, url)
    assert "cannot reach the store" in line


def test_an_unreadable_export_names_its_url_not_the_fetched_copy(s3: S3Server, tmp_path: Path) -> None:
    url = s3.put("from/broken/results.json", b'{"results": ')  # JSON cut short: unreadable (exit 2)
    code, out, err = audited("promptfoo", url, tmp_path / "out", *store_args(s3))
    line = one_error_line(code, out, err, url)
    assert "evalframe-fetched-" not in out + err, line


def test_the_fetched_copies_are_removed_after_the_import(s3: S3Server) -> None:
    import tempfile

    def copies() -> set[Path]:
        return set(Path(tempfile.gettempdir()).glob("evalframe-fetched-*"))

    before = copies()
    url = s3.put("from/removed/results.json", PROMPTFOO.read_bytes())
    frames = ef.read("promptfoo", url, storage_options=s3.options)
    assert frames.ledger.height == 30  # SOURCES.md: 2 providers x (4+4+3+4) tests
    assert copies() == before
    with pytest.raises(InputFormatError):
        ef.read("promptfoo", "s3://evals/from/removed/nothing.json", storage_options=s3.options)
    assert copies() == before


def test_an_lm_eval_samples_file_brings_the_results_file_beside_it(s3: S3Server, tmp_path: Path) -> None:
    folder = s3.put_tree(LM_EVAL, f"beside/{tmp_path.name}/lmeh")
    samples = "samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"
    remote = ef.read("lm-eval", f"{folder}/{samples}", score="exact_match,strict-match", storage_options=s3.options)
    local = ef.read("lm-eval", LM_EVAL / samples, score="exact_match,strict-match")
    # SOURCES.md: the results file plans all 1319 documents of gsm8k; the samples hold 3 rows
    assert remote.ledger.height == local.ledger.height == 3
    assert remote.plan.height == local.plan.height == 1319
    assert remote.ledger.drop("source").equals(local.ledger.drop("source"))
    assert set(remote.ledger.get_column("source").str.split(":").list.first()) <= {"s3"}


def test_evalframe_import_reads_a_url_with_the_environments_credentials(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars as pl

    for key, value in s3.options.items():
        monkeypatch.setenv(key.upper(), value)
    url = s3.put("import/results.json", PROMPTFOO.read_bytes())
    code, out, err = run(["import", "promptfoo", url, "--out", str(tmp_path / "out")])
    assert code == 0, err
    ledger = pl.read_parquet(tmp_path / "out" / "ledger.parquet")
    assert ledger.height == 30  # SOURCES.md: 30 rows
    assert set(ledger.get_column("source").str.split(":").list.first()) == {"s3"}

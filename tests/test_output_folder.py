"""--out is evalframe's own folder (SPEC §6b): ownership by manifest, refusals, all-or-nothing exchange, kills."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

import evalframe as ef
import evalframe.cli.inputs as inputs_module
import evalframe.report.output as report_module
from evalframe.cli import main
from evalframe.errors import EvalframeError, OutputFolderError
from evalframe.report import MANIFEST, read_manifest, write_output
from tests.conftest import FIXTURES, REAL

ORBIT = FIXTURES / "orbit_desk"
ORBIT_ARGS = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv"), "--candidates"]
AUDIT_FILES = [
    "attempts.parquet",
    "evalframe-manifest.json",
    "problems.parquet",
    "report.html",
    "report.json",
    "report.md",
    "summary.parquet",
    "units.parquet",
]
REFUSAL_FILES = ["evalframe-manifest.json", "problems.parquet", "report.html", "report.json", "report.md"]
FOREIGN = (
    "holds {n} file(s) evalframe did not write (not in its evalframe-manifest.json, or changed since): it never "
    "overwrites, moves or deletes them; move them away or choose a new or empty folder"
)
HOLDS_INPUT = (
    "holds an input of this run, or lies inside one: evalframe never writes where it reads; choose another output "
    "folder"
)


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` with its bytes (a link: its target), to prove a folder was left as it was."""
    entries: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        entries[key] = f"-> {os.readlink(path)}" if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes()
    return entries


def whole(out: Path) -> dict[str, Any] | None:
    """The manifest of a whole output folder (every file listed, nothing else, hashes equal); None if absent."""
    if not out.exists():
        return None
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert sorted(p.name for p in out.iterdir()) == sorted([*manifest["files"], MANIFEST])
    for name, record in manifest["files"].items():
        data = (out / name).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (record["sha256"], record["size"]), name
    return manifest


def orbit_report(candidates: list[str]) -> ef.AuditReport:
    plan = ef.Plan.from_file(ORBIT / "plan.csv", candidates=candidates)
    return ef.audit(plan, ef.load(ORBIT / "results.csv").frame.filter(pl.col("candidate").is_in(candidates)))


# --- the repros ---------------------------------------------------------------------------


def test_an_output_folder_holding_the_inputs_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    x = tmp_path / "X"
    assert run([*ORBIT_ARGS, "A,B", "--out", str(x)])[0] == 0
    before = snapshot(tmp_path)
    code, stdout, stderr = run(
        ["audit", "--plan", f"{x}/units.parquet", "--results", f"{x}/attempts.parquet", "--out", str(x)]
    )
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [f"{x}/units.parquet", f"{x}/attempts.parquet", f"error: --out {x}: {HOLDS_INPUT}"]
    assert snapshot(tmp_path) == before
    # A glob whose files lie in the folder, and a folder inside an input folder, are refused the same way.
    code, _, stderr = run(["audit", "--plan", f"{x}/units.parquet", "--results", f"{x}/*.parquet", "--out", str(x)])
    assert code == 2
    assert stderr.splitlines() == [f"{x}/units.parquet", f"{x}/*.parquet", f"error: --out {x}: {HOLDS_INPUT}"]
    code, _, stderr = run(["audit", "--plan", f"{x}/units.parquet", "--results", str(x), "--out", f"{x}/o"])
    assert code == 2
    assert stderr.splitlines() == [str(x), f"error: --out {x}/o: {HOLDS_INPUT}"]
    assert snapshot(tmp_path) == before


def orbit_in(folder: Path, *, plan: str = "plan.csv", results: dict[str, str] | None = None) -> None:
    """The Orbit Desk plan, and its results split into files by candidate (default: all in results.csv)."""
    header, *rows = (ORBIT / "results.csv").read_text().splitlines()
    (folder / plan).write_bytes((ORBIT / "plan.csv").read_bytes())
    for name, cands in (results or {"results.csv": "AB"}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("\n".join([header, *(r for r in rows if r[0] in cands)]) + "\n")


def orbit_summary(out: Path) -> list[tuple[Any, ...]]:
    return pl.read_parquet(out / "summary.parquet").select("candidate", "planned", "scored", "passed").rows()


def test_a_new_out_beside_the_files_a_glob_matched_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A glob was taken to read its whole folder (the part before the first wildcard, the current folder for
    # 'res*.csv'), so every new --out beside its files was refused. A glob reads the files it matches.
    orbit_in(tmp_path, results={"res1.csv": "AB", "data/res1.csv": "A", "data/res2.csv": "B"})
    monkeypatch.chdir(tmp_path)
    for results, out in (("res*.csv", "newsub"), ("data/*.csv", "data/new"), (f"{tmp_path}/data/res[12].csv", "o2")):
        args = ["audit", "--plan", "plan.csv", "--results", results, "--candidates", "A,B", "--out", out]
        code, _, stderr = run(args)
        assert (code, stderr) == (0, "")
        assert sorted(p.name for p in Path(out).iterdir()) == AUDIT_FILES
        assert orbit_summary(Path(out)) == [("A", 4, 2, 2), ("B", 4, 4, 3)]


def test_a_new_out_beside_inputs_named_with_brackets_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 'plan [1].csv' is a file, not a pattern: it reads itself, not the folder before its '['.
    orbit_in(tmp_path, plan="plan [1].csv", results={"res [1].csv": "AB", "runs [1]/res.csv": "AB"})
    monkeypatch.chdir(tmp_path)
    args = ["audit", "--plan", "plan [1].csv", "--results", "res [1].csv", "--candidates", "A,B"]
    code, _, stderr = run([*args, "--out", "o_br"])
    assert (code, stderr) == (0, "")
    assert sorted(p.name for p in Path("o_br").iterdir()) == AUDIT_FILES
    assert orbit_summary(Path("o_br")) == [("A", 4, 2, 2), ("B", 4, 4, 3)]
    # A folder named with brackets is an input folder like any other: --out inside it is refused.
    before = snapshot(tmp_path)
    args = ["audit", "--plan", "plan [1].csv", "--results", "runs [1]", "--candidates", "A,B"]
    code, stdout, stderr = run([*args, "--out", "runs [1]/o"])
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == ["runs [1]", f"error: --out runs [1]/o: {HOLDS_INPUT}"]
    assert snapshot(tmp_path) == before


def test_an_out_holding_files_a_glob_matched_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    orbit_in(tmp_path, results={"runs/res1.csv": "A", "runs/sub/res2.csv": "B"})
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    for results, out in (("runs/*.csv", "runs"), ("runs/**/*.csv", "runs/sub")):
        args = ["audit", "--plan", "plan.csv", "--results", results, "--candidates", "A,B", "--out", out]
        code, stdout, stderr = run(args)
        assert (code, stdout) == (2, "")
        assert stderr.splitlines() == [results, f"error: --out {out}: {HOLDS_INPUT}"]
        assert snapshot(tmp_path) == before


def test_a_refused_audit_never_deletes_a_users_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("my notes\n")
    (out / "report.html").write_text("<p>mine</p>\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,2\n")
    before = snapshot(tmp_path)
    code, stdout, stderr = run(
        ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(bad), "--candidates", "A", "--out", str(out)]
    )
    # Refused before the audit runs: exit 2, the folder named file by file, nothing touched.
    assert (code, stdout) == (2, "")
    assert stderr.splitlines() == [
        f"{out}/report.html",
        f"{out}/report.md",
        f"error: --out {out}: {FOREIGN.format(n=2)}",
    ]
    assert snapshot(tmp_path) == before


def test_import_never_deletes_a_users_plan_and_ledger(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"not a zip")
    data = tmp_path / "data"
    data.mkdir()
    (data / "plan.parquet").write_bytes(b"the user's plan")
    (data / "ledger.parquet").write_bytes(b"the user's ledger")
    before = snapshot(tmp_path)
    code, _, stderr = run(["import", "inspect", str(broken), "--out", str(data)])
    assert code == 2
    assert stderr.splitlines() == [
        f"{data}/ledger.parquet",
        f"{data}/plan.parquet",
        f"error: --out {data}: {FOREIGN.format(n=2)}",
    ]
    assert snapshot(tmp_path) == before
    # An unreadable file is an input error: nothing is written, not even into a new folder.
    code, _, stderr = run(["import", "inspect", str(broken), "--out", str(tmp_path / "imp")])
    assert (code, stderr) == (2, f"error: {broken}: not a readable .eval (zip) archive: File is not a zip file\n")
    assert not (tmp_path / "imp").exists()
    # Into a folder of its own, a refused import (no log in the folder) leaves its notes and its manifest.
    empty = tmp_path / "no_logs"
    empty.mkdir()
    code, _, _ = run(["import", "inspect", str(empty), "--out", str(tmp_path / "imp")])
    assert code == 1
    assert sorted(p.name for p in (tmp_path / "imp").iterdir()) == ["evalframe-manifest.json", "notes.parquet"]
    manifest = whole(tmp_path / "imp")
    assert manifest is not None and (manifest["command"], manifest["outcome"]) == (
        "evalframe import inspect",
        "refused",
    )


def test_an_import_replaces_its_own_earlier_output_as_a_whole(tmp_path: Path) -> None:
    export = REAL / "inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/log_streaming.eval"
    out = tmp_path / "imp"
    assert run(["import", "inspect", str(export), "--out", str(out)])[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "evalframe-manifest.json",
        "exports.json",
        "ledger.parquet",
        "notes.parquet",
        "plan.parquet",
    ]
    assert (whole(out) or {})["outcome"] == "imported"
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"not a zip")
    earlier = {p.name: p.read_bytes() for p in out.iterdir()}
    assert run(["import", "inspect", str(broken), "--out", str(out)])[0] == 2
    # An unreadable file leaves the earlier output as it was.
    assert {p.name: p.read_bytes() for p in out.iterdir()} == earlier
    empty = tmp_path / "no_logs"
    empty.mkdir()
    assert run(["import", "inspect", str(empty), "--out", str(out)])[0] == 1
    # No plan or ledger that looks complete beside the refusal's notes.
    assert sorted(p.name for p in out.iterdir()) == ["evalframe-manifest.json", "notes.parquet"]


def test_out_dot_in_a_folder_of_other_files_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "report.md").write_text("mine\n")
    (work / "paper.tex").write_text("\\section{}\n")
    monkeypatch.chdir(work)
    before = snapshot(tmp_path)
    code, _, stderr = run([*ORBIT_ARGS, "A,B", "--out", "."])
    assert code == 2
    assert stderr.splitlines() == ["./paper.tex", "./report.md", f"error: --out .: {FOREIGN.format(n=2)}"]
    assert snapshot(tmp_path) == before
    # An empty current folder is refused too: the folder is replaced as a whole, and the shell stands in it.
    (work / "report.md").unlink()
    (work / "paper.tex").unlink()
    code, _, stderr = run([*ORBIT_ARGS, "A,B", "--out", "."])
    assert code == 2
    assert stderr.splitlines() == [
        "error: --out .: is the current folder or holds it: evalframe replaces its output folder as a whole; give a "
        "new folder inside it (e.g. out/)"
    ]
    assert snapshot(tmp_path) == {"work": "dir"}


# --- ownership ------------------------------------------------------------------------------------


def test_the_manifest_lists_every_file_with_its_hash_and_the_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "A,B", "--out", str(out)])[0] == 0
    manifest = whole(out)
    assert manifest is not None and manifest == read_manifest(out)
    assert sorted(manifest) == [
        "command",
        "evalframe_version",
        "files",
        "format",
        "outcome",
        "run_id",
        "written_at",
    ]
    assert (manifest["format"], manifest["command"], manifest["outcome"]) == (
        "evalframe-output/1",
        "evalframe audit",
        "audited",
    )
    assert sorted(manifest["files"]) == [n for n in AUDIT_FILES if n != MANIFEST]
    assert len(manifest["run_id"]) == 32 and manifest["written_at"].endswith("+00:00")


def test_the_same_rows_in_other_chunks_write_the_same_bytes(tmp_path: Path) -> None:
    """A table's Parquet bytes (and so its manifest hash) follow its rows, not how polars happened to chunk them."""
    whole_table = pl.DataFrame({"line": range(200_000), "case_id": [f"c{i % 977}" for i in range(200_000)]})
    pieces = pl.concat([whole_table.slice(i, 1_000) for i in range(0, 200_000, 1_000)], rechunk=False)
    assert pieces.n_chunks() == 200
    for name, frame in (("whole", whole_table), ("pieces", pieces)):
        report_module.write_parquet(frame, tmp_path / f"{name}.parquet", metadata={"evalframe.table": "t"})
    assert (tmp_path / "whole.parquet").read_bytes() == (tmp_path / "pieces.parquet").read_bytes()


def test_a_changed_file_a_subfolder_or_a_link_in_an_earlier_output_is_foreign(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = orbit_report(["A", "B"])
    report.write(out)
    with (out / "report.md").open("a") as f:
        f.write("my edit\n")
    (out / "sub").mkdir()
    (out / "summary.parquet").unlink()
    (out / "summary.parquet").symlink_to(out / "units.parquet")
    before = snapshot(tmp_path)
    with pytest.raises(OutputFolderError) as refused:
        report.write(out)
    assert isinstance(refused.value, EvalframeError)
    assert refused.value.foreign == [f"{out}/report.md", f"{out}/sub/", f"{out}/summary.parquet"]
    assert refused.value.reason == FOREIGN.format(n=3)
    assert str(refused.value) == f"--out {out}: {FOREIGN.format(n=3)}"
    assert snapshot(tmp_path) == before


def test_a_manifest_evalframe_cannot_read_owns_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    orbit_report(["A"]).write(out)
    (out / MANIFEST).write_text("{not json")
    with pytest.raises(OutputFolderError) as refused:
        orbit_report(["A"]).write(out)
    assert refused.value.foreign == [f"{out}/{name}" for name in AUDIT_FILES]


def test_a_file_given_as_the_output_folder_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("a file")
    with pytest.raises(OutputFolderError) as refused:
        orbit_report(["A"]).write(target)
    assert (refused.value.foreign, refused.value.reason) == ([str(target)], "is a file, not a folder")
    assert target.read_text() == "a file"


def test_the_python_api_refuses_the_report_inputs_in_the_folder(tmp_path: Path) -> None:
    plan = tmp_path / "out" / "plan.csv"
    plan.parent.mkdir()
    plan.write_bytes((ORBIT / "plan.csv").read_bytes())
    report = ef.audit(ef.Plan.from_file(plan, candidates=["A", "B"]), ORBIT / "results.csv")
    with pytest.raises(OutputFolderError) as refused:
        report.write(tmp_path / "out")
    assert (refused.value.foreign, refused.value.reason) == ([str(plan)], HOLDS_INPUT)
    assert [p.name for p in plan.parent.iterdir()] == ["plan.csv"]


def test_compare_out_follows_the_same_rules(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    args = [*ORBIT_ARGS, "A,B", "--baseline", "B", "--candidate", "A", "--out", str(out)]
    args[0] = "compare"
    code, _, stderr = run(args)
    assert code == 2
    assert stderr.splitlines() == [f"{out}/notes.txt", f"error: --out {out}: {FOREIGN.format(n=1)}"]
    assert snapshot(out) == {"notes.txt": b"mine"}
    (out / "notes.txt").unlink()
    assert run(args)[0] == 0
    assert (whole(out) or {})["outcome"] == "compared"


# --- replacing ------------------------------------------------------------------------------------


def test_outputs_written_one_after_another_replace_each_other_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate,case_id,passed\nA,quote,2\n")
    refused = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(bad), "--candidates", "A"]
    sliced = ["slices.parquet", "missingness.parquet"]
    steps = [
        ([*ORBIT_ARGS, "A,B", "--slice", "case_type"], 0, sorted([*AUDIT_FILES, *sliced]), "audited"),
        (refused, 1, REFUSAL_FILES, "refused"),
        ([*ORBIT_ARGS, "A,B"], 0, AUDIT_FILES, "audited"),
        ([*ORBIT_ARGS, "A,B", "--slice", "case_type"], 0, sorted([*AUDIT_FILES, *sliced]), "audited"),
    ]
    runs = set()
    for args, code, files, outcome in steps:
        assert run([*args, "--out", str(out)])[0] == code
        manifest = whole(out)
        assert manifest is not None
        assert (sorted(p.name for p in out.iterdir()), manifest["outcome"]) == (files, outcome)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out"]
        runs.add(manifest["run_id"])
    assert len(runs) == 4
    assert pl.read_parquet(out / "summary.parquet").get_column("candidate").to_list() == ["A", "B"]


def test_a_foreign_file_that_appears_during_the_write_stops_the_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    orbit_report(["A", "B"]).write(out)

    def intrude(name: str) -> None:
        if name == "manifest written":
            (out / "intruder.txt").write_text("written meanwhile")

    monkeypatch.setattr(report_module, "_step", intrude)
    before_names = sorted(p.name for p in out.iterdir())
    with pytest.raises(OutputFolderError) as refused:
        orbit_report(["A"]).write(out)
    assert refused.value.foreign == [f"{out}/intruder.txt"]
    assert sorted(p.name for p in out.iterdir()) == sorted([*before_names, "intruder.txt"])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "cannot write the output: No space left on device"),
        (
            pl.exceptions.ComputeError("failed to write: disk full\nmore"),
            "cannot write the output: failed to write: disk full",
        ),
    ],
    ids=["oserror", "polars"],
)
def test_a_full_disk_leaves_the_earlier_output_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception, reason: str
) -> None:
    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "A,B", "--out", str(out)])[0] == 0
    before = snapshot(tmp_path)
    written = report_module.write_parquet

    def fill_up(frame: pl.DataFrame, path: Path, **kwargs: Any) -> None:
        if path.name == "units.parquet":
            raise failure
        written(frame, path, **kwargs)

    monkeypatch.setattr(report_module, "write_parquet", fill_up)
    code, _, stderr = run([*ORBIT_ARGS, "A,B", "--slice", "case_type", "--out", str(out)])
    assert code == 2
    assert stderr.splitlines() == [f"error: --out {out}: {reason}"]
    assert snapshot(tmp_path) == before


BUSY = (
    "is a mount point or otherwise busy, and evalframe replaces its output folder as a whole: give a new folder "
    "inside it (e.g. out/)"
)


def test_an_out_that_cannot_be_moved_aside_a_mount_point_is_refused_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An empty mount point given as --out: renaming it fails with EBUSY (issue 45, item 10).
    out = tmp_path / "mnt"
    out.mkdir()
    before = snapshot(tmp_path)
    renamed = os.rename

    def busy(src: Any, dst: Any) -> None:
        if Path(src) == out:
            raise OSError(errno.EBUSY, "Device or resource busy", str(src))
        renamed(src, dst)

    monkeypatch.setattr(report_module.os, "rename", busy)
    code, _, stderr = run([*ORBIT_ARGS, "A,B", "--out", str(out)])
    assert code == 2
    assert stderr.splitlines() == [f"error: --out {out}: {BUSY}"]
    assert snapshot(tmp_path) == before
    with pytest.raises(OutputFolderError) as refused:
        orbit_report(["A"]).write(out)
    assert (refused.value.reason, refused.value.foreign) == (BUSY, [])
    assert snapshot(tmp_path) == before


def test_a_mount_point_is_refused_before_the_audit_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "mnt"
    out.mkdir()
    mounts = {out}
    monkeypatch.setattr(report_module.os.path, "ismount", lambda path: Path(path) in mounts)
    audited: list[object] = []
    monkeypatch.setattr(inputs_module, "audit", lambda *args, **kwargs: audited.append(args))
    code, _, stderr = run([*ORBIT_ARGS, "A,B", "--out", str(out)])
    assert (code, audited) == (2, [])
    assert stderr.splitlines() == [f"error: --out {out}: {BUSY}"]
    assert [p.name for p in tmp_path.iterdir()] == ["mnt"]
    mounts.clear()
    monkeypatch.setattr(inputs_module, "audit", ef.audit)
    assert run([*ORBIT_ARGS, "A,B", "--out", str(out / "out")])[0] == 0
    mounts.add(out / "out")
    with pytest.raises(OutputFolderError) as refused:
        orbit_report(["A"]).write(out / "out")
    assert (refused.value.reason, refused.value.foreign) == (BUSY, [])


def test_the_library_checks_the_folder_once_under_the_lock_and_refuses_as_the_early_check_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = report_module._check
    calls: list[str] = []

    def counting(out: Any, inputs: Any) -> None:
        calls.append(os.fspath(out))
        checked(out, inputs)

    monkeypatch.setattr(report_module, "_check", counting)
    out = tmp_path / "out"
    write_output(out, {"summary": pl.DataFrame({"scored": [2]})})
    assert calls == [str(out)]
    (out / "notes.txt").write_text("mine")
    before = snapshot(tmp_path)
    with pytest.raises(OutputFolderError) as late:
        write_output(out, {"summary": pl.DataFrame({"scored": [3]})})
    with pytest.raises(OutputFolderError) as early:
        report_module.check_output_folder(out)
    assert (late.value.reason, late.value.foreign) == (early.value.reason, early.value.foreign)
    assert (late.value.reason, late.value.foreign) == (FOREIGN.format(n=1), [f"{out}/notes.txt"])
    assert calls == [str(out), str(out), str(out)]
    assert snapshot(tmp_path) == before


def test_the_next_write_removes_only_the_temporaries_of_stopped_writes(tmp_path: Path) -> None:
    def temporary(name: str, *, marker: bool, content: bool) -> Path:
        folder = tmp_path / name
        (folder / "old").mkdir(parents=True) if content else folder.mkdir()
        if content:
            (folder / "old" / "summary.parquet").write_bytes(b"x")
        if marker:
            (folder / ".evalframe-temporary").write_text("{}")
        return folder

    temporary(".evalframe-tmp-out-stopped", marker=True, content=True)
    temporary(".evalframe-tmp-out-empty", marker=False, content=False)
    live = temporary(".evalframe-tmp-out-live", marker=True, content=True)
    temporary(".evalframe-tmp-lookalike", marker=False, content=True)
    (tmp_path / ".evalframe-other").mkdir()
    held = os.open(live / ".evalframe-temporary", os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # a write in progress holds its marker
        orbit_report(["A"]).write(tmp_path / "out")
    finally:
        os.close(held)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".evalframe-other",
        ".evalframe-tmp-lookalike",
        ".evalframe-tmp-out-live",
        "out",
    ]
    assert snapshot(live) == {".evalframe-temporary": b"{}", "old": "dir", "old/summary.parquet": b"x"}


# --- kill -9 at each step, and racing writes ------------------------------------------------------

#: A write of a new output over an earlier one, in a process of its own that kills itself (SIGKILL) at step k.
KILLED_WRITE = """
import os, signal
import polars as pl
import evalframe.report.output
from evalframe.report import write_output
steps = []
def step(name):
    steps.append(name)
    print(name, flush=True)
    if len(steps) == {k}:
        os.kill(os.getpid(), signal.SIGKILL)
evalframe.report.output._step = step
tables = {{"summary": pl.DataFrame({{"candidate": ["A"]}}), "units": pl.DataFrame({{"case_id": ["q1", "q2"]}})}}
write_output({out!r}, tables, {{"report.md": "new\\n", "report.json": "{{}}\\n"}}, outcome="new")
"""

#: What --out holds after kill -9 at each step of writing the new output over the earlier one.
KILL_OUTCOMES = [
    ("temporary folder made", "earlier"),
    ("wrote summary.parquet", "earlier"),
    ("wrote units.parquet", "earlier"),
    ("wrote report.md", "earlier"),
    ("wrote report.json", "earlier"),
    ("manifest written", "earlier"),
    ("earlier output moved aside", None),
    ("new output in place", "new"),
    ("removed old", "new"),
    ("temporary folder removed", "new"),
]


def write_earlier(out: Path) -> None:
    write_output(out, {"problems": pl.DataFrame({"kind": ["x"]})}, {"report.md": "earlier\n"}, outcome="earlier")


def test_kill_9_at_each_step_of_the_write_leaves_one_whole_output_and_the_next_write_cleans_up(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    write_earlier(out)
    seen = []
    for k in range(1, len(KILL_OUTCOMES) + 2):
        earlier = whole(out)
        assert earlier is not None and earlier["outcome"] == "earlier"
        done = subprocess.run(
            [sys.executable, "-c", KILLED_WRITE.format(out=str(out), k=k)], capture_output=True, text=True
        )
        steps = done.stdout.splitlines()
        if k > len(KILL_OUTCOMES):
            assert done.returncode == 0, done.stderr
            assert steps == [step for step, _ in KILL_OUTCOMES]
            break
        assert done.returncode == -9, done.stderr
        manifest = whole(out)  # the earlier output, the new one, or nothing: never a mix
        outcome = None if manifest is None else manifest["outcome"]
        if outcome == "earlier":
            assert manifest == earlier
        elif outcome == "new":
            assert (out / "report.md").read_text() == "new\n"
        seen.append((steps[-1], outcome))
        # The next write removes what the killed one left, and puts the earlier output back for the next step.
        write_earlier(out)
        assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert seen == KILL_OUTCOMES
    assert sorted(p.name for p in out.iterdir()) == [
        "evalframe-manifest.json",
        "report.json",
        "report.md",
        "summary.parquet",
        "units.parquet",
    ]


#: Writes that alternate two outputs of different files, run in two processes at once on one folder.
RACING_WRITES = """
import polars as pl
from evalframe.report import write_output
mine = {{"{name}": pl.DataFrame({{"n": list(range(1000))}})}}
for i in range(25):
    write_output({out!r}, mine, {{"report.md": "{name} " + str(i)}}, outcome="{name}")
"""


def test_racing_writes_on_one_folder_each_replace_it_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    scripts = [RACING_WRITES.format(name=name, out=str(out)) for name in ("first", "second")]
    running = [subprocess.Popen([sys.executable, "-c", s], stderr=subprocess.PIPE, text=True) for s in scripts]
    for process in running:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    manifest = whole(out)
    assert manifest is not None and manifest["outcome"] in ("first", "second")
    name = manifest["outcome"]
    assert sorted(p.name for p in out.iterdir()) == sorted(["evalframe-manifest.json", f"{name}.parquet", "report.md"])
    assert (out / "report.md").read_text() == f"{name} 24"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_every_parquet_evalframe_writes_has_page_checksums_and_a_flipped_bit_is_an_input_error(
    tmp_path: Path,
) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    assert run([*ORBIT_ARGS, "A,B", "--out", str(out)])[0] == 0
    for path in sorted(out.glob("*.parquet")):  # a page without a checksum would pass unverified
        with pq.ParquetFile(path, page_checksum_verification=True) as pages:
            assert pages.read().num_rows == pl.read_parquet(path).height
    units = out / "units.parquet"
    column = pq.ParquetFile(units).metadata.row_group(0).column(0)
    data = bytearray(units.read_bytes())
    data[column.data_page_offset + column.total_compressed_size - 1] ^= 0x01  # the last byte of its first page
    flipped = tmp_path / "units.parquet"
    flipped.write_bytes(bytes(data))
    results = FIXTURES / "orbit_desk" / "results.csv"
    code, stdout, stderr = run(["audit", "--plan", str(flipped), "--results", str(results)])
    assert (code, stdout) == (2, "")
    assert stderr.startswith(f"error: {flipped}: a page does not match its checksum or cannot be read (OSError: ")
    assert stderr.endswith("); the file changed after evalframe wrote it: write it again\n")

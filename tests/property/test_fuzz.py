"""Fuzz suite (issues 19, 45): hostile CSV plans and ledgers, corrupt Parquet, broken JSON, Inspect .eval archives.

Each CSV example is a valid batch (ids that look like numbers, markup or HTML, unicode, commas and quotes)
written with LF, CRLF or CR line endings, then mutated by one attack family: ``clean`` (none), ``field``
(a value: empty, padded, ``NaN``, ``true``, ``2``, ``007``, huge integers, unknown statuses, cases and
candidates; a repeated or dropped row; a blank line; a field more or less), ``header`` (repeated, reserved
``line``/``source``, typo, dropped column), ``bytes`` (a BOM anywhere, bytes that are not UTF-8, NUL, a
lone CR or LF, a stray quote, truncation), ``plan`` (the field, header and bytes attacks on the plan) and
``mixed`` (several of them). The independent checker (:mod:`tests.property.checker`, no evalframe import)
says what ``evalframe audit`` must do; evalframe must agree exactly: the exit code, the refusing problems
(kind and line) and the funnel counts. Every example runs the API (``Plan.from_file`` and ``audit``: the
problems and counts); one in four runs the CLI as well, through click's CliRunner (its exit code must be the
API's outcome), and half of those write ``--out``. Every family, Parquet, JSON and ``.eval`` ones too, must
never show a traceback (an exit code other than 0-3 or ``Traceback`` in the output), never modify an input,
and leave in ``--out`` only the files its manifest lists (nothing at all beside it).

Runs:

* CI: ``pytest tests/property/test_fuzz.py`` (profile ``ci``, 360 seeded examples);
* by hand: ``HYPOTHESIS_PROFILE=fuzz pytest tests/property/test_fuzz.py`` (profile ``fuzz``, 11,700 examples);
* the attack counts table of benchmarks/RESULTS.md: add ``FUZZ_TALLY=/tmp/tally.jsonl`` (each example is
  recorded there instead of failing the test) and then ``python -m tests.property.test_fuzz /tmp/tally.jsonl``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sys
import tempfile
import warnings
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe.audit import with_ledger_problems
from evalframe.cli import main
from tests.conftest import FIXTURES
from tests.property import conftest as _profiles  # noqa: F401 -- registers the profiles outside pytest too
from tests.property.checker import COUNTS, EXEC, SCORE_STATUS, Attempt, Expected, expect, funnel

PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
TALLY = os.environ.get("FUZZ_TALLY")

#: Case ids: text that looks like numbers, markup, HTML, or holds commas, quotes and unicode.
CASE_IDS = [
    "quote",
    "refund",
    "007",
    "7",
    "1.50",
    "1.5",
    "quote, revised",
    'say "hi"',
    "[link=https://x.example]x[/link]",
    "[/x]",
    "test_add[int-1]",
    "<b>bold</b>",
    "é",
    "e\u0301",
    "日本",
    "🙂",
    "NaN",
    "true",
    "-0",
    "1e3",
    "a\nb",
]
#: Candidate names (``--candidates`` is comma-separated: no commas, no padding).
CANDIDATES = ["A", "B", "gpt-4o", "[red]x[/red]", "007", "7", "Ü", "[/x]", "<i>c</i>"]
ANSWERS = ["ALLOW", "DENY", "007", "7", "1.50", "1.5", "[b]y[/b]"]
#: Values a field is set to by the ``field`` family.
HOSTILE = [
    "",
    " 1",
    "1 ",
    "NaN",
    "nan",
    "inf",
    "true",
    "2",
    "-1",
    "0",
    "1",
    "1.0",
    "1e0",
    "+1",
    "01",
    "007",
    "1_0",
    "١",
    "99999999999999999999",
    "9223372036854775808",
    "9223372036854775807",
    "unscored",
    "Completed",
    "skipped",
    "invented",
    "C",
    "\u00a0x",
    "x\t",
    "[/x]",
    "run-2",
]
HEADER_NAMES = ["line", "source", "limit", "pased", "Case_ID", "score", "passed", "trial", "attempt", "run_id"]
BYTES = [b"\xef\xbb\xbf", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\r", b"\n", b"\r\n", b'"', b","]
FAMILIES = ["clean", "field", "header", "bytes", "plan", "mixed"]


@st.composite
def batches(draw: st.DrawFn) -> dict[str, Any]:
    """A valid plan and ledger as records (header first), with the command's flags."""
    cases = draw(st.lists(st.sampled_from(CASE_IDS), min_size=1, max_size=4, unique=True))
    cands = draw(st.lists(st.sampled_from(CANDIDATES), min_size=1, max_size=3, unique=True))
    trials = draw(st.integers(1, 2))
    shape = draw(st.sampled_from(["passed", "score", "status", "answers"]))
    run_id = draw(st.sampled_from([None, "run-1"]))
    versioned = draw(st.booleans())
    plan_header = ["case_id", "case_type"] + (["expected"] if shape == "answers" else [])
    plan_header += ["dataset_version"] if versioned else []
    expected = {c: draw(st.sampled_from(ANSWERS)) for c in cases}
    versions = {c: draw(st.sampled_from(["1.10", "1.1", "007"])) for c in cases}
    plan_rows = [
        [c, f"t{i % 2}"] + ([expected[c]] if shape == "answers" else []) + ([versions[c]] if versioned else [])
        for i, c in enumerate(cases)
    ]
    retries = shape == "status" and draw(st.booleans())
    header = (["candidate"] if len(cands) > 1 or draw(st.booleans()) else []) + ["case_id"]
    header += ["trial"] if trials > 1 or draw(st.booleans()) else []
    header += ["attempt"] if retries else []
    header += {"passed": ["passed"], "score": ["score"], "answers": ["answer"]}.get(
        shape, ["exec_status", "score_status", "score"]
    )
    header += ["run_id"] if run_id is not None or draw(st.booleans()) else []
    header += ["dataset_version"] if versioned and draw(st.booleans()) else []
    rows: list[list[str]] = []
    for cand in cands:
        for case in cases:
            for trial in range(1, trials + 1):
                for attempt in range(1, draw(st.integers(0, 2 if retries else 1)) + 1):
                    values = {"candidate": cand, "case_id": case, "trial": str(trial), "attempt": str(attempt)}
                    values["run_id"] = run_id or "run-1"
                    values["dataset_version"] = versions[case]
                    if shape == "passed":
                        values["passed"] = draw(st.sampled_from(["0", "1"]))
                    elif shape == "score":
                        values["score"] = draw(st.sampled_from(["0", "1", "1.0", "0.0"]))
                    elif shape == "answers":
                        values["answer"] = draw(st.sampled_from([expected[case], *ANSWERS]))
                    else:
                        ex = draw(st.sampled_from(EXEC))
                        sc = draw(st.sampled_from(SCORE_STATUS)) if ex == "completed" else "not_scored"
                        values |= {"exec_status": ex, "score_status": sc}
                        values["score"] = draw(st.sampled_from(["0", "1"])) if sc == "scored" else ""
                    rows.append([values[h] for h in header])
    order = draw(st.permutations(range(len(rows))))
    return {
        "plan": [plan_header, *plan_rows],
        "results": [header, *(rows[i] for i in order)],
        "candidates": cands,
        "trials": trials,
        "run_id": run_id,
        "ending": draw(st.sampled_from(["\n", "\r\n", "\r"])),
        "quoting": draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])),
        # One example in four runs the CLI too (its exit code, output and files); of those, one in two writes
        # --out (Parquet, reports, fsync: most of a run's time). Every example runs the API.
        "with_cli": draw(st.sampled_from([True, False, False, False])),
        "with_out": draw(st.booleans()),
    }


def _field_attack(draw: st.DrawFn, records: list[list[str]]) -> None:
    """Change one record of ``records`` (header first) in place."""
    if len(records) < 2:
        return
    i = draw(st.integers(1, len(records) - 1))
    what = draw(st.sampled_from(["set", "set", "set", "duplicate", "drop", "blank", "wider", "narrower"]))
    if what == "set" and records[i]:
        j = draw(st.integers(0, len(records[i]) - 1))
        records[i][j] = draw(st.sampled_from(HOSTILE + CASE_IDS + CANDIDATES))
    elif what == "duplicate":
        records.insert(draw(st.integers(1, len(records))), list(records[i]))
    elif what == "drop":
        del records[i]
    elif what == "blank":
        records.insert(i, [])
    elif what == "wider":
        records[i].append("extra")
    elif what == "narrower" and records[i]:
        records[i].pop()


def _header_attack(draw: st.DrawFn, records: list[list[str]]) -> None:
    header = records[0]
    if not header:
        return
    j = draw(st.integers(0, len(header) - 1))
    what = draw(st.sampled_from(["rename", "repeat", "drop"]))
    if what == "rename":
        header[j] = draw(st.sampled_from(HEADER_NAMES))
    elif what == "repeat":
        header[j] = header[draw(st.integers(0, len(header) - 1))]
    else:
        for record in records:
            if len(record) > j:
                del record[j]


def _bytes_attack(draw: st.DrawFn, data: bytes) -> bytes:
    what = draw(st.sampled_from(["insert", "insert", "insert", "truncate", "delete", "utf16"]))
    at = draw(st.integers(0, len(data)))
    if what == "insert":
        return data[:at] + draw(st.sampled_from(BYTES)) + data[at:]
    if what == "truncate":
        return data[:at]
    if what == "delete":
        return data[:at] + data[at + 1 :]
    return b"\xff\xfe" + data


def _csv(records: list[list[str]], ending: str, quoting: int) -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator=ending, quoting=quoting).writerows(records)  # type: ignore[arg-type]
    return buffer.getvalue().encode("utf-8")


@st.composite
def attacks(draw: st.DrawFn, family: str) -> dict[str, Any]:
    """A batch written as CSV bytes after one family's attacks."""
    batch = draw(batches())
    plan, results = [list(r) for r in batch["plan"]], [list(r) for r in batch["results"]]
    steps = {
        "clean": [],
        "field": [("results", "field")],
        "header": [("results", "header")],
        "bytes": [("results", "bytes")],
        "plan": [("plan", draw(st.sampled_from(["field", "header", "bytes"])))],
        "mixed": draw(
            st.lists(
                st.tuples(st.sampled_from(["plan", "results"]), st.sampled_from(["field", "header", "bytes"])),
                min_size=2,
                max_size=4,
            )
        ),
    }[family]
    target = {"plan": plan, "results": results}
    for role, kind in steps:
        if kind == "field":
            _field_attack(draw, target[role])
        elif kind == "header":
            _header_attack(draw, target[role])
    data = {role: _csv(records, batch["ending"], batch["quoting"]) for role, records in target.items()}
    for role, kind in steps:
        if kind == "bytes":
            data[role] = _bytes_attack(draw, data[role])
    return {**batch, "plan_bytes": data["plan"], "results_bytes": data["results"], "family": family}


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")}


def _invoke(args: list[str], root: Path, inputs: Path) -> tuple[int, str, str, str | None]:
    """Run the CLI; (exit code, output, stdout, what went wrong with the files or None)."""
    before = _digest(inputs)
    result = CliRunner().invoke(main, args)
    output = result.output
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        code, output = -1, f"{output}\nTraceback: {type(result.exception).__name__}: {result.exception}"
    lost = None
    if _digest(inputs) != before:
        lost = "an input was modified"
    beside = sorted(p.name for p in root.iterdir() if p.name not in ("in", "out"))
    if beside:
        lost = f"files beside --out: {beside}"
    out = root / "out"
    if out.exists():
        manifest = out / "evalframe-manifest.json"
        listed = set(json.loads(manifest.read_text())["files"]) if manifest.exists() else set()
        present = {str(p.relative_to(out)) for p in out.rglob("*")} - {"evalframe-manifest.json"}
        if present != listed:
            lost = f"--out holds {sorted(present)}, its manifest lists {sorted(listed)}"
    return code, output, result.stdout, lost


def _record(family: str, verdict: str, detail: str = "") -> None:
    """Count one example (FUZZ_TALLY) or fail on a wrong verdict."""
    if TALLY:
        with open(TALLY, "a", encoding="utf-8") as f:
            f.write(json.dumps({"family": family, "verdict": verdict, "detail": detail[:2000]}) + "\n")
        return
    assert verdict == "agrees", f"{family}: {verdict}: {detail}"


def _verdict(expected: Expected, code: int, output: str, lost: str | None, found: str | None) -> tuple[str, str]:
    if code not in (0, 1, 2, 3) or "Traceback" in output:
        return "traceback", output[-1500:]
    if lost:
        return "data_lost", lost
    if expected.exit != 0 and code == 0:
        return "silent_acceptance", found or ""
    if expected.exit == 0 and code != 0:
        return "false_refusal", (found or "") + output[-800:]
    if found:
        return "wrong_outcome", found
    return "agrees", ""


def _through_the_api(
    plan: Path, results: Path, example: dict[str, Any]
) -> tuple[int, set[tuple[str, str, int | None]], dict[str, dict[str, int]]]:
    """(exit code the outcome maps to, refusing problems as (role, kind, line), funnel counts by candidate)."""
    try:
        try:
            read = ef.Plan.from_file(
                plan, candidates=example["candidates"], trials=example["trials"], run_id=example["run_id"]
            )
        except ef.PlanError as exc:  # the ledger's independent problems too, as the command lists them
            raise with_ledger_problems(exc, str(results)) from None
        summary = ef.audit(read, str(results)).summary
    except ef.AuditRefused as exc:
        table = exc.problems.filter(pl.col("refusing")).select("kind", "source", "line")
        return 1, {("plan" if s == str(plan) else "results", k, n) for k, s, n in table.iter_rows()}, {}
    except ef.InputFormatError:
        return 2, set(), {}
    except Exception as exc:  # noqa: BLE001 -- any other exception is a traceback, counted as one
        return -1, {("api", f"{type(exc).__name__}: {exc}", None)}, {}
    return 0, set(), {row["candidate"]: {k: row[k] for k in COUNTS} for row in summary.iter_rows(named=True)}


def _run_csv(example: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inputs = root / "in"
        inputs.mkdir()
        plan, results = inputs / "plan.csv", inputs / "results.csv"
        plan.write_bytes(example["plan_bytes"])
        results.write_bytes(example["results_bytes"])
        args = ["audit", "--plan", str(plan), "--results", str(results), "--format", "json"]
        args += ["--candidates", ",".join(example["candidates"]), "--trials", str(example["trials"])]
        args += ["--run-id", example["run_id"]] if example["run_id"] else []
        expected = expect(
            example["plan_bytes"],
            example["results_bytes"],
            candidates=example["candidates"],
            trials=example["trials"],
            run_id=example["run_id"],
        )
        # The problems and counts are read through the API (the CLI's --format json gives counts by kind only).
        before = _digest(inputs)
        api, refusing, counts = _through_the_api(plan, results, example)
        if api == -1:
            _record(example["family"], "traceback", f"API: {refusing}\nexample: {example!r}")
            return
        code, output, lost = api, "", None if _digest(inputs) == before else "an input was modified"
        if example["with_cli"]:
            out = ["--out", str(root / "out")] if example["with_out"] else []
            code, output, _, lost = _invoke([*args, *out], root, inputs)
        if code in (0, 1, 2) and api != code:
            _record(example["family"], "wrong_outcome", f"CLI exit {code}, API {api}\n{output[-800:]}")
            return
        found = expected.agrees(code, refusing, counts) if code in (0, 1, 2) else None
        verdict, detail = _verdict(expected, code, output, lost, found)
        _record(example["family"], verdict, f"{detail}\nexample: {example!r}")


@pytest.mark.parametrize("family", FAMILIES)
def test_evalframe_agrees_with_the_independent_checker(family: str) -> None:
    @settings(PROFILE)
    @given(attacks(family))
    def run(example: dict[str, Any]) -> None:
        _run_csv(example)

    run()


def _damage(draw: st.DrawFn, data: bytes) -> bytes:
    """Flip, zero, cut or repeat bytes anywhere in a file."""
    what = draw(st.sampled_from(["flip", "flip", "zero", "truncate", "repeat"]))
    if not data:
        return data
    at = draw(st.integers(0, len(data) - 1))
    if what == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if what == "zero":
        width = draw(st.integers(1, 64))
        return data[:at] + bytes(min(width, len(data) - at)) + data[at + width :]
    if what == "truncate":
        return data[:at]
    return data + data[at:]


def _parquet(records: list[list[str]], compression: str) -> bytes:
    """The records as a Parquet file: trial and attempt as Int64, the rest as text."""
    header, *rows = records
    frame = pl.DataFrame(
        [
            pl.Series(name, [r[i] for r in rows], dtype=pl.String).cast(
                pl.Int64 if name in ("trial", "attempt") else pl.String
            )
            for i, name in enumerate(header)
        ]
    )
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression=compression)  # type: ignore[arg-type]
    return buffer.getvalue()


def _readable(path: Path) -> bool:
    try:
        pl.read_parquet(path)
    except BaseException:  # a panic of the reader derives from BaseException
        return False
    return True


@st.composite
def parquet_attacks(draw: st.DrawFn) -> dict[str, Any]:
    """A valid batch whose ledger is a Parquet file, damaged."""
    batch = draw(batches())
    clean = _parquet(batch["results"], draw(st.sampled_from(["zstd", "snappy", "uncompressed"])))
    return {**batch, "results_bytes": _damage(draw, clean)}


@settings(PROFILE)
@given(parquet_attacks())
def test_corrupt_parquet_is_an_input_error_or_read_whole(example: dict[str, Any]) -> None:
    """A Parquet ledger the reader cannot read is exit 2; whatever else: no traceback, nothing lost."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inputs = root / "in"
        inputs.mkdir()
        plan, results = inputs / "plan.csv", inputs / "results.parquet"
        plan.write_bytes(_csv(example["plan"], "\n", csv.QUOTE_MINIMAL))
        results.write_bytes(example["results_bytes"])
        args = ["audit", "--plan", str(plan), "--results", str(results), "--format", "json"]
        args += ["--candidates", ",".join(example["candidates"]), "--trials", str(example["trials"])]
        args += ["--run-id", example["run_id"]] if example["run_id"] else []
        code, output, _, lost = _invoke([*args, "--out", str(root / "out")], root, inputs)
        readable = _readable(results)
        if code not in (0, 1, 2, 3) or "Traceback" in output:
            verdict, detail = "traceback", output[-1500:]
        elif lost:
            verdict, detail = "data_lost", lost
        elif not readable and code != 2:
            verdict, detail = ("silent_acceptance" if code == 0 else "wrong_outcome"), output[-800:]
        elif code == 2 and len([line for line in output.splitlines() if line.strip()]) != 1:
            verdict, detail = "wrong_outcome", f"exit 2 in more than one line: {output[-800:]}"
        else:
            verdict, detail = "agrees", ""
        _record("parquet", verdict, detail)


#: Exports (and ledgers) the JSON attacks start from: (format for `evalframe import` or None for a JSON
#: Lines ledger given to `audit --results`, the files).
JSON_EXPORTS = [
    ("inspect", [FIXTURES / "inspect_ai/eval-set-retried/2025-05-12T20-28-13-04-00_popularity.json"]),
    (
        "lm-eval",
        [
            FIXTURES / "lm_eval/two_filters/results_2025-03-04T05-06-07.080910.json",
            FIXTURES / "lm_eval/two_filters/samples_gsm8k_2025-03-04T05-06-07.080910.jsonl",
        ],
    ),
    ("promptfoo", [FIXTURES / "real/promptfoo/promptfoo-promptfoo/test/__fixtures__/sample-export.json"]),
    (None, []),
]


def _json_damage(draw: st.DrawFn, data: bytes) -> bytes:
    """Byte damage, or a JSON-level attack: deep nesting, a huge integer, NaN, a repeated key."""
    what = draw(st.sampled_from(["bytes", "nest", "huge", "nan", "repeat"]))
    if what == "bytes":
        return _damage(draw, data)
    spots = [i for i, b in enumerate(data) if b == ord(":")]
    if not spots:
        return data
    at = draw(st.sampled_from(spots)) + 1
    if what == "nest":
        depth = draw(st.sampled_from([100, 2_000, 200_000]))
        return data[:at] + b"[" * depth + b"1" + b"]" * depth + b"," + data[at:]
    if what == "huge":
        number = draw(st.sampled_from([b"9223372036854775808", b"-9223372036854775809", b"1" + b"0" * 30, b"9" * 5000]))
        return data[:at] + number + b"," + data[at:]
    if what == "nan":
        return data[:at] + draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity"])) + b"," + data[at:]
    brace = data.find(b"{")
    return data[: brace + 1] + b'"id": 1, "id": 2, ' + data[brace + 1 :] if brace >= 0 else data


@st.composite
def json_attacks(draw: st.DrawFn) -> dict[str, Any]:
    fmt, files = draw(st.sampled_from(JSON_EXPORTS))
    if fmt is None:  # a JSON Lines ledger
        batch = draw(batches())
        header, *rows = batch["results"]
        text = "".join(json.dumps(dict(zip(header, r, strict=True))) + "\n" for r in rows)
        contents = {"results.jsonl": _json_damage(draw, text.encode())}
        return {**batch, "format": None, "contents": contents}
    contents = {f.name: f.read_bytes() for f in files}
    victim = draw(st.sampled_from(sorted(contents)))
    contents[victim] = _json_damage(draw, contents[victim])
    return {"format": fmt, "contents": contents}


@settings(PROFILE)
@given(json_attacks())
def test_broken_json_never_shows_a_traceback_or_loses_data(example: dict[str, Any]) -> None:
    """Importers and the JSON Lines reader: exit 0, 1 or 2 (one line), never a traceback; nothing lost."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inputs = root / "in"
        inputs.mkdir()
        for name, data in example["contents"].items():
            (inputs / name).write_bytes(data)
        paths = [str(inputs / name) for name in example["contents"]]
        if example["format"] is None:
            plan = inputs / "plan.csv"
            plan.write_bytes(_csv(example["plan"], "\n", csv.QUOTE_MINIMAL))
            args = [
                "audit",
                "--plan",
                str(plan),
                "--results",
                paths[0],
                "--candidates",
                ",".join(example["candidates"]),
            ]
            args += ["--trials", str(example["trials"])]
        else:
            args = ["import", example["format"], *paths]
        code, output, _, lost = _invoke([*args, "--out", str(root / "out")], root, inputs)
        if code not in (0, 1, 2) or "Traceback" in output:
            verdict, detail = "traceback", output[-1500:]
        elif lost:
            verdict, detail = "data_lost", lost
        elif code == 2 and len([line for line in output.splitlines() if line.strip()]) != 1:
            verdict, detail = "wrong_outcome", f"exit 2 in more than one line: {output[-800:]}"
        else:
            verdict, detail = "agrees", ""
        _record("json", verdict, f"{detail}\n{example.get('format')}")


#: Sample ids of generated ``.eval`` archives (integers and text; no two alike once written as text).
EVAL_IDS: list[int | str] = [1, 2, 7, 10, "a", "q-1", "日本", "x y"]
#: What a generated sample is: graded C (passed) or I (failed), a null grade (judge error), no score at all,
#: an execution error, or no member (a missing unit).
EVAL_KINDS = ["C", "C", "I", "I", "null", "unscored", "error", "absent"]
#: Mutations of an archive; the oracle of each is in :func:`_eval_expected`.
EVAL_MUTATIONS = [
    "clean",
    "truncated",
    "cut_member",
    "duplicate",
    "lying_size",
    "dotdot",
    "bomb",
    "epochs",
    "no_header",
]


def _eval_sample(case: int | str, epoch: int, kind: str) -> dict[str, Any]:
    sample: dict[str, Any] = {"id": case, "epoch": epoch, "input": "q", "target": "C", "messages": []}
    sample["output"] = {"model": "m", "choices": [{"message": {"role": "assistant", "content": "x"}}]}
    sample["scores"] = {} if kind in ("unscored", "error") else {"match": {"value": None if kind == "null" else kind}}
    if kind == "error":
        sample["output"] = {"model": "m", "choices": []}
        sample["error"] = {"message": "boom", "traceback": "", "traceback_ansi": ""}
    return sample


@st.composite
def eval_archives(draw: st.DrawFn) -> dict[str, Any]:
    """An Inspect ``.eval`` archive as its members (name, bytes) and the sample dicts they were written from."""
    ids = draw(st.lists(st.sampled_from(EVAL_IDS), min_size=1, max_size=4, unique=True))
    epochs = draw(st.integers(1, 3))
    header_epochs = epochs
    kinds = {(c, e): draw(st.sampled_from(EVAL_KINDS)) for c in ids for e in range(1, epochs + 1)}
    samples = [_eval_sample(c, e, k) for (c, e), k in kinds.items() if k != "absent"]
    mutation = draw(st.sampled_from(EVAL_MUTATIONS))
    if mutation == "epochs":  # the header says more epochs than the samples hold, or fewer
        header_epochs = draw(st.sampled_from([epochs + 1, epochs - 1])) or epochs + 1
    spec = {"run_id": "r1", "created": "2025-01-01T00:00:00+00:00", "task": "t", "task_id": "t1", "model": "m/a"}
    spec["dataset"] = {"name": "d", "samples": len(ids), "sample_ids": ids}
    spec["config"] = {"epochs": header_epochs} if header_epochs > 1 or draw(st.booleans()) else {}
    spec["scorers"] = [{"name": "match", "options": {}, "metrics": []}]
    header = {"version": 2, "status": "success", "eval": spec}
    members = [("_journal/start.json", json.dumps({"version": 2, "eval": spec}).encode())]
    order = draw(st.permutations(range(len(samples))))
    members += [
        (f"samples/{samples[i]['id']}_epoch_{samples[i]['epoch']}.json", json.dumps(samples[i]).encode()) for i in order
    ]
    members += [("reductions.json", b"[]"), ("summaries.json", b"[]")]
    if draw(st.booleans()) or mutation == "no_header":  # an interrupted run leaves no header.json
        members.append(("header.json", json.dumps(header).encode()))
    return {
        "ids": ids,
        "epochs": epochs,
        "header_epochs": header_epochs,
        "samples": samples,
        "members": members,
        "mutation": mutation,
        "deflate": draw(st.booleans()),
        "with_out": draw(st.sampled_from([True, False, False, False])),  # --out (fsync) is most of a run's time
    }


def _zip(members: list[tuple[str, bytes]], *, deflate: bool) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": the duplicate attack writes one on purpose
        for name, data in members:
            archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
    return buffer.getvalue()


def _lie_about_size(data: bytes, name: str, size: int) -> bytes:
    """The archive with the decompressed size its central directory records for ``name`` set to ``size``."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(out[at + 28 : at + 30], "little")
        if bytes(out[at + 46 : at + 46 + length]) == name.encode():
            out[at + 24 : at + 28] = size.to_bytes(4, "little")
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


@st.composite
def eval_attacks(draw: st.DrawFn) -> dict[str, Any]:
    """A generated archive after its mutation: the bytes, the flags and what the oracle needs to know."""
    example = draw(eval_archives())
    members: list[tuple[str, bytes]] = list(example["members"])
    names = [n for n, _ in members]
    # The members the reader reads: header.json (else the journal's start) and the samples.
    read = [n for n in names if n.startswith("samples/")] + ["header.json" if "header.json" in names else names[0]]
    mutation, flags, victim = example["mutation"], [], None
    if mutation == "cut_member":
        victim = draw(st.sampled_from(read))
        members = [(n, d[: draw(st.integers(0, len(d) - 1))] if n == victim else d) for n, d in members]
    elif mutation == "duplicate":
        members.insert(draw(st.integers(0, len(members))), draw(st.sampled_from(example["members"])))
    elif mutation == "dotdot":  # a sample renamed through "..", and a member named outside the archive
        members = [(f"samples/../{n}" if n == read[0] and n.startswith("samples/") else n, d) for n, d in members]
        members.append(("../../escape.json", b"{}"))
    elif mutation == "bomb" and read[0].startswith("samples/"):  # whitespace that deflates a thousandfold
        victim = read[0]
        members = [(n, d + b" " * draw(st.sampled_from([2**20, 3 * 2**20])) if n == victim else d) for n, d in members]
        size = next(len(d) for n, d in members if n == victim)
        over = draw(st.booleans())  # the limit at the member's size (read) or one byte below it (refused)
        flags = ["--max-member-bytes", str(size - 1 if over else size)]
        victim = victim if over else None
    elif mutation == "no_header":
        members = [(n, d) for n, d in members if n not in ("header.json", "_journal/start.json")]
    data = _zip(members, deflate=example["deflate"] or mutation == "bomb")
    if mutation == "truncated":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif mutation == "lying_size":
        victim = draw(st.sampled_from(read))
        size = len(dict(members)[victim])
        data = _lie_about_size(data, victim, draw(st.integers(0, 2 * size + 10).filter(lambda s: s != size)))
    return {**example, "data": data, "flags": flags, "victim": victim}


def _eval_expected(example: dict[str, Any], path: str) -> tuple[int, str, dict[str, dict[str, int]]]:
    """The oracle: (exit code, text the output must hold, funnel counts when exit 0), from the sample dicts.

    An archive that cannot be read (truncated, a name held twice, neither header) is exit 2 naming the file;
    a member cut mid-JSON, recording a size its bytes do not have, or over ``--max-member-bytes`` is exit 2
    naming ``file!member``. Samples of an epoch the header does not plan are refused (``trial_out_of_range``).
    Otherwise the counts are the samples' recount: ``C`` passed, ``I`` failed, a null grade a judge failure,
    no score not scored, an error an execution failure, no member missing. Member names are never paths: a
    ``..`` in one changes nothing.
    """
    mutation, victim = example["mutation"], example["victim"]
    if mutation in ("truncated", "duplicate", "no_header"):
        return 2, path, {}
    if victim is not None:
        return 2, f"{path}!{victim}", {}
    if any(sample["epoch"] > example["header_epochs"] for sample in example["samples"]):
        return 1, "trial_out_of_range", {}
    attempts: dict[tuple[str, str, int], list[Attempt]] = defaultdict(list)
    for sample in example["samples"]:
        value = sample["scores"].get("match", {}).get("value", "absent")
        status = {"C": "scored", "I": "scored", None: "judge_error"}.get(value, "not_scored")
        unit = ("m/a", str(sample["id"]), sample["epoch"])
        exec_status = "error" if "error" in sample else "completed"
        attempts[unit].append((1, exec_status, status, exec_status == "completed", value == "C"))
    return 0, "", funnel(attempts, ["m/a"], [str(c) for c in example["ids"]], example["header_epochs"])


@settings(PROFILE)
@given(eval_attacks())
def test_eval_archives_agree_with_a_recount_of_their_samples(example: dict[str, Any]) -> None:
    """Inspect ``.eval`` archives, valid and hostile, through ``audit --from inspect``: the oracle's outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inputs = root / "in"
        inputs.mkdir()
        path = inputs / "log.eval"
        path.write_bytes(example["data"])
        out = ["--out", str(root / "out")] if example["with_out"] else []
        args = [*example["flags"], "audit", "--from", "inspect", str(path), "--format", "json", *out]
        code, output, stdout, lost = _invoke(args, root, inputs)
        exit_code, needle, counts = _eval_expected(example, str(path))
        lines = [line for line in output.splitlines() if line.strip()]
        if code not in (0, 1, 2, 3) or "Traceback" in output:
            verdict, detail = "traceback", output[-1500:]
        elif lost:
            verdict, detail = "data_lost", lost
        elif code != exit_code:
            kind = "silent_acceptance" if code == 0 else "false_refusal" if exit_code == 0 else "wrong_outcome"
            verdict, detail = kind, f"exit {code}, expected {exit_code}: {output[-800:]}"
        elif code == 2 and (len(lines) != 1 or needle not in lines[0]):
            verdict, detail = "wrong_outcome", f"exit 2 must be one line naming {needle}: {output[-800:]}"
        elif code == 1 and needle not in output:
            verdict, detail = "wrong_outcome", f"the refusal does not list {needle}: {output[-800:]}"
        elif code == 0 and (found := _summary_counts(stdout)) != counts:
            verdict, detail = "wrong_outcome", f"counts {found}, expected {counts}"
        else:
            verdict, detail = "agrees", ""
        _record(
            "eval", verdict, f"{detail}\nmutation {example['mutation']}, members {[n for n, _ in example['members']]}"
        )


def _summary_counts(stdout: str) -> dict[str, dict[str, int]]:
    summary = json.loads(stdout)["summary"]
    return {row["candidate"]: {k: row[k] for k in COUNTS} for row in summary}


def tally_table(path: str) -> str:
    """The attack counts table (Markdown) of a FUZZ_TALLY file."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        rows[record["family"]][record["verdict"]] += 1
    columns = ["silent_acceptance", "false_refusal", "wrong_outcome", "traceback", "data_lost"]
    names = ["silent acceptances", "false refusals", "wrong outcomes", "tracebacks", "data lost"]
    out = ["| family | cases | " + " | ".join(names) + " |"]
    out.append("|---" * (len(columns) + 2) + "|")
    total: Counter[str] = Counter()
    for family in [*FAMILIES, "parquet", "json", "eval"]:
        counts = rows.get(family, Counter())
        total.update(counts)
        out.append(f"| {family} | {sum(counts.values())} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    out.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[c]) for c in columns) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    print(tally_table(sys.argv[1]))

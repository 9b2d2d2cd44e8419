"""Import Inspect AI eval logs (``.eval`` archives, ``.json`` logs, eval-set folders) as a plan and a ledger.

Format
------
The schema is the pydantic ``EvalLog`` model and its parts (``EvalSpec``,
``EvalDataset``, ``EvalConfig``, ``EvalResults``, ``EvalSample``,
``EvalSampleLimit``, ``EvalRetryError``) in ``src/inspect_ai/log/_log.py`` of
UKGovernmentBEIS/inspect_ai; user documentation at
https://inspect.aisi.org.uk/eval-logs.html.

* A ``.eval`` file is a zip archive: ``header.json`` (the log without its
  samples), one ``samples/<id>_epoch_<n>.json`` per sample, and a journal
  (``_journal/start.json`` …). A run that was interrupted may have no
  ``header.json``; the eval spec is then read from ``_journal/start.json`` and
  the run status is taken to be ``started``. Members are deflate-compressed
  (Inspect before 0.3.206) or **zstd-compressed** (zip method 93, Inspect's
  default since 0.3.206), which Python's ``zipfile`` (before 3.14) cannot
  read: those are decompressed with the ``zstandard`` package. Whatever a
  member declares, no member is decompressed beyond ``Limits.member_bytes``
  (default :data:`MAX_MEMBER_BYTES`, ``--max-member-bytes``; a larger one
  is an ``unreadable_file``), no archive beyond ``Limits.archive_bytes`` in
  all (an input error), and a member whose decompressed
  bytes do not match its recorded CRC-32 and size is unreadable.
* A ``.json`` file is one ``EvalLog`` document with a ``samples`` array.
* An **eval-set folder** (``inspect eval-set --log-dir DIR``) holds the logs
  of its tasks beside ``eval-set.json`` (the set's manifest),
  ``logs.json`` (an index of the logs' headers) and ``.eval-set-id``; these
  three are not logs and are skipped, found in a folder or named directly.

How the export becomes a plan
-----------------------------
The plan is what the header says was *planned*: ``eval.dataset.sample_ids`` ×
trials ``1..eval.config.epochs`` (default 1) for the candidate
``eval.model``. A run limited with ``--limit`` (or ``--sample-id``) plans
only the samples it lists: the ids of the dataset's other samples are not in
the log, so they cannot be planned; a ``limited_run`` note then says "the
run was limited to N of M samples" (M = ``eval.dataset.samples``). Logs
without ``sample_ids`` fall back to the sample ids present in the rows, with
a ``plan_from_rows`` note. Several logs combine into one plan (the union of
their units per candidate); when candidates have different units the plan
is an explicit units table. Every case carries a ``task`` plan column (the
log's ``eval.task``) that can be used as a slice.

Case ids are the sample ids as strings: ``1`` and ``"1"`` are the same case
(the one id normalisation), with an ``id_normalised`` note when both
spellings occur for one task. When the logs read together cover more than
one task, case ids are prefixed with the task name (``<task>/<id>``, e.g.
``inspect_evals/arc_easy/3``) so that sample 1 of one task is not sample 1
of another.

How samples become ledger rows
------------------------------
One row per attempt. The sample's ``error_retries`` (earlier failed attempts
of the same sample inside one log) become attempts ``1..k`` with
``exec_status = error``; the sample itself is the last attempt. Retries of a
model call *inside* a sample (ModelEvents with ``attempt``/``retries``) are
not attempts of the unit. Logs of the same (task, model), such as the logs
of a retried eval set, are successive runs: their attempts of a unit are
numbered on, in the order of the log's start time (``stats.started_at``,
else ``eval.created``; then ``eval.created``, then path), so the audit's
declared retry policy decides which one counts. A sample seen twice (the
same ``uuid``, or for logs without uuids the same sample content: a log
copied, or a completed sample an eval-set retry carried into its new log) is
one attempt imported twice: it is read once, from the earliest log, with a
``duplicate_import`` note. ``run_id`` is the log's ``eval.run_id``
(``eval.eval_id`` when absent).

Grades (the chosen scorer's ``value``, read by the toolkit's one grade
meaning): ``C`` → 1 and ``I`` → 0 (binary); ``P`` (partial credit) → 0.5 and
``N`` (no answer) → 0, the values Inspect's own ``value_to_float`` gives them;
booleans → 1/0; numbers → the number. A null or absent value, a non-finite
number, or a value that is not a score (other text, a list, a dict) is a
``judge_error``. A sample without the chosen scorer (or with no scores at
all: no scorer ran) is ``not_scored``. A sample with an ``error`` is
``exec_status = error`` and never scored. A sample halted by a ``limit`` is
still ``completed`` (and may be scored); the limit is kept in the ``limit``
column as ``<type>=<value>``.

The scorer: ``--score NAME`` must be a scorer of every log read (else the
import refuses with ``unknown_score`` naming the scorers each log has). With
none declared, a log's scorer is the first one its header lists
(``results.scores``, else ``eval.scorers``); a log whose header lists none
but whose samples carry several refuses with ``ambiguous_score``; a log with
no scorer at all leaves every unit ``not_scored``.

Header totals (``results.total_samples``/``completed_samples``) are never
evidence: when they disagree with the rows a ``header_rows_disagree`` note
says so; a run whose ``status`` is not ``success`` gets a ``run_status`` note.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeGuard

import polars as pl
import zstandard

from evalframe.columns import (
    ATTEMPT,
    CANDIDATE,
    CASE_ID,
    EXEC_STATUS,
    HAS_OUTPUT,
    LIMIT,
    LINE,
    PASSED,
    RUN_ID,
    SCORE,
    SCORE_STATUS,
    SOURCE,
    TRIAL,
    UNIT_KEY,
)
from evalframe.errors import InputFormatError
from evalframe.importers import LEDGER_SCHEMA as _LEDGER_SCHEMA
from evalframe.importers import Imported
from evalframe.importers._kit import (
    LETTER_GRADES,
    MAX_PLANNED_UNITS,
    ScoreChoiceError,
    Unreadable,
    build_plan,
    choose_score,
    find_files,
    finish,
    grade,
    note,
    parse_json,
    planned_size,
    read_json,
)
from evalframe.load import Limits, PathLike, current_limits, limit_detail

__all__ = ["MAX_MEMBER_BYTES", "TASK", "read"]

#: Plan column holding each case's Inspect task name (``eval.task``).
TASK: Final = "task"

#: The default of ``Limits.member_bytes``: the most bytes one ``.eval`` archive member is decompressed to (or
#: read compressed); a larger member is an ``unreadable_file``, whatever size the archive declares for it.
MAX_MEMBER_BYTES: Final = Limits().member_bytes

_SAMPLE_MEMBER: Final = re.compile(r"^samples/.+_epoch_\d+\.json$")
_HEADER: Final = "header.json"
_JOURNAL_START: Final = "_journal/start.json"
#: Files of an Inspect log directory or eval-set folder that are not logs (manifest, index, id file).
_COMPANIONS: Final = frozenset({"eval-set.json", "logs.json", ".eval-set-id"})
#: Zip compression method number of zstd (APPNOTE 4.4.5), which Python's zipfile reads only from 3.14.
_ZSTD: Final = 93
_LOCAL_HEADER: Final = struct.Struct("<4s5H3L2H")


@dataclass
class _Sample:
    """One sample read from a log, with where it came from."""

    data: dict[str, Any]
    raw_id: int | str
    epoch: int
    line: int
    source: str

    @property
    def identity(self) -> str:
        """What makes two copies one attempt: the sample's uuid, else a hash of its whole content."""
        uuid = self.data.get("uuid")
        if isinstance(uuid, str) and uuid:
            return f"uuid {uuid}"
        text = json.dumps(self.data, sort_keys=True, ensure_ascii=False, default=str)
        return "content " + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Log:
    """One readable log: its header fields and samples."""

    path: str
    fmt: str
    header_member: str | None
    doc: dict[str, Any]
    status: str
    samples: list[_Sample] = field(default_factory=list)

    @property
    def spec(self) -> dict[str, Any]:
        return _obj(self.doc.get("eval")) or {}

    @property
    def task(self) -> str:
        return str(self.spec.get("task"))

    @property
    def model(self) -> str:
        return str(self.spec.get("model"))

    @property
    def run_id(self) -> str | None:
        for key in ("run_id", "eval_id"):
            value = self.spec.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def results(self) -> dict[str, Any]:
        return _obj(self.doc.get("results")) or {}

    @property
    def dataset(self) -> dict[str, Any]:
        return _obj(self.spec.get("dataset")) or {}

    @property
    def config(self) -> dict[str, Any]:
        return _obj(self.spec.get("config")) or {}


def _obj(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


def _is_id(value: Any) -> TypeGuard[int | str]:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_log(path: Path) -> bool:
    """Whether a file found in a folder is an Inspect log (not an eval-set manifest, index or id file)."""
    return path.suffix in (".eval", ".json") and path.name not in _COMPANIONS


# --- reading files ------------------------------------------------------------------------------


def _read_sample(value: Any, line: int, source: str, place: str) -> _Sample:
    """Check a sample's identity fields (``id``, ``epoch``); raises :class:`Unreadable`."""
    sample = _obj(value)
    if sample is None:
        raise Unreadable(source, f"{place} is not a JSON object", line=line)
    raw_id, epoch = sample.get("id"), sample.get("epoch")
    if not _is_id(raw_id):
        raise Unreadable(source, f"{place} has no valid id (got {raw_id!r})", line=line)
    if not _is_count(epoch) or not 1 <= epoch <= MAX_PLANNED_UNITS:
        raise Unreadable(source, f"{place} has no valid epoch (got {epoch!r})", line=line)
    return _Sample(sample, raw_id, epoch, line, source)


def _check_header(doc: Any, source: str) -> dict[str, Any]:
    """The log object, checked for the fields every log must have (``eval.task``, ``eval.model``)."""
    top = _obj(doc)
    if top is None:
        raise Unreadable(source, "the log is not a JSON object")
    spec = _obj(top.get("eval"))
    if spec is None:
        raise Unreadable(source, "the log has no 'eval' object")
    for key in ("task", "model"):
        if not isinstance(spec.get(key), str):
            raise Unreadable(source, f"the log has no string 'eval.{key}'")
    return top


def _member_bytes(archive: zipfile.ZipFile, path: str, member: zipfile.ZipInfo) -> bytes:
    """The decompressed bytes of one archive member, at most ``Limits.member_bytes``; raises :class:`Unreadable`.

    A member whose recorded size is larger is refused before it is read; one whose bytes outgrow the bound
    while it is decompressed (recorded sizes can lie) is refused there.
    """
    source = f"{path}!{member.filename}"
    bound = current_limits().member_bytes
    if member.flag_bits & 0x1:
        raise Unreadable(source, "the archive member is encrypted")
    if member.file_size > bound:
        what = f"the archive member records {member.file_size} bytes decompressed, more than {bound} bytes"
        raise Unreadable(source, limit_detail("member_bytes", what))
    try:
        if member.compress_type == _ZSTD:
            data = _zstd_member(path, member, source)
        else:
            with archive.open(member) as stream:
                data = stream.read(bound + 1)
    except Unreadable:
        raise
    except Exception as exc:  # zlib.error, BadZipFile, EOFError, OSError, NotImplementedError: "cannot read"
        raise Unreadable(source, f"cannot read the archive member: {exc}") from None
    if len(data) > bound:
        what = f"the archive member decompresses to more than {bound} bytes"
        raise Unreadable(source, limit_detail("member_bytes", what))
    return data


def _zstd_member(path: str, member: zipfile.ZipInfo, source: str) -> bytes:
    """Decompress a zstd (method 93) member from its local entry, bounded and checked against CRC and size."""
    bound = current_limits().member_bytes
    if member.compress_size > bound:
        what = f"the archive member holds more than {bound} bytes (compressed)"
        raise Unreadable(source, limit_detail("member_bytes", what))
    with open(path, "rb") as file:
        file.seek(member.header_offset)
        local = file.read(_LOCAL_HEADER.size)
        if len(local) != _LOCAL_HEADER.size or local[:4] != b"PK\x03\x04":
            raise Unreadable(source, "the archive member's local header is missing or damaged")
        fields = _LOCAL_HEADER.unpack(local)
        file.seek(member.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
        raw = file.read(member.compress_size)
    if len(raw) != member.compress_size:
        raise Unreadable(source, "the archive member is truncated")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        chunks: list[bytes] = []
        size = 0
        while size <= bound:
            chunk = reader.read(1024 * 1024)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except zstandard.ZstdError as exc:
        raise Unreadable(source, f"invalid zstd data: {exc}") from None
    data = b"".join(chunks)
    if len(data) <= bound and (len(data) != member.file_size or zlib.crc32(data) != member.CRC):
        raise Unreadable(source, "the decompressed archive member does not match its recorded size and CRC-32")
    return data


def _read_eval(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.eval`` zip archive: the log and a note per unreadable sample member."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return None, [note("unreadable_file", path, f"not a readable .eval (zip) archive: {exc}")]
    notes: list[dict[str, Any]] = []
    with archive:
        members = {m.filename: m for m in archive.infolist()}
        name = _HEADER if _HEADER in members else _JOURNAL_START if _JOURNAL_START in members else None
        if name is None:
            return None, [note("unreadable_file", path, f"the archive has neither {_HEADER} nor {_JOURNAL_START}")]
        try:
            source = f"{path}!{name}"
            top = _check_header(parse_json(_member_bytes(archive, path, members[name]), source), source)
        except Unreadable as exc:
            return None, [exc.note]
        status = top.get("status") if name == _HEADER else "started"
        log = _Log(path, "eval", name, top, status if isinstance(status, str) else "started")
        sample_names = [n for n in members if _SAMPLE_MEMBER.match(n)]
        # The whole archive is bounded too: by the sizes its directory records, before any sample is read, and
        # by the bytes decompressed, as they are (a member's recorded size can lie).
        bound = current_limits().archive_bytes
        recorded = members[name].file_size + sum(members[n].file_size for n in sample_names)
        if recorded > bound:
            what = f"the archive's members record {recorded} bytes decompressed, more than {bound} bytes"
            raise InputFormatError(path, limit_detail("archive_bytes", what))
        read = 0
        for line, member in enumerate(sample_names, start=1):
            source = f"{path}!{member}"
            try:
                data = _member_bytes(archive, path, members[member])
                read += len(data)
                if read > bound:
                    what = f"the archive's members decompress to more than {bound} bytes"
                    raise InputFormatError(path, limit_detail("archive_bytes", what))
                value = parse_json(data, source)
                log.samples.append(_read_sample(value, line, source, member))
            except Unreadable as exc:
                notes.append(exc.note)
    return log, notes


def _read_json_log(path: str) -> tuple[_Log | None, list[dict[str, Any]]]:
    """Read a ``.json`` log (one EvalLog document)."""
    try:
        top = _check_header(read_json(Path(path)), path)
    except Unreadable as exc:
        return None, [exc.note]
    status = top.get("status")
    log = _Log(path, "json", None, top, status if isinstance(status, str) else "started")
    samples = top.get("samples")
    if samples is None:
        return log, []
    if not isinstance(samples, list):
        return log, [note("unreadable_file", path, "'samples' is not an array")]
    notes: list[dict[str, Any]] = []
    for line, value in enumerate(samples, start=1):
        try:
            log.samples.append(_read_sample(value, line, path, f"samples[{line - 1}]"))
        except Unreadable as exc:
            notes.append(exc.note)
    return log, notes


def _read_log(path: Path) -> tuple[_Log | None, list[dict[str, Any]]]:
    if path.suffix == ".eval" or (path.suffix != ".json" and zipfile.is_zipfile(path)):
        return _read_eval(str(path))
    return _read_json_log(str(path))


# --- header facts -------------------------------------------------------------------------------


def _when(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _started(log: _Log) -> tuple[bool, datetime, datetime, str]:
    """Sort key of a log among runs of the same (task, model): start time, created time, path."""
    stats = _obj(log.doc.get("stats")) or {}
    created = _when(log.spec.get("created"))
    started = _when(stats.get("started_at")) or created
    never = datetime.min.replace(tzinfo=UTC)
    return (started is None, started or never, created or never, log.path)


def _epochs(log: _Log) -> tuple[int, dict[str, Any] | None]:
    epochs = log.config.get("epochs")
    if epochs is None:
        return 1, None
    if not _is_count(epochs) or epochs < 1:
        return 1, note("unreadable_file", log.path, f"eval.config.epochs = {epochs!r} is not a positive integer")
    return epochs, None


def _declared_ids(log: _Log) -> tuple[list[int | str] | None, dict[str, Any] | None]:
    """``eval.dataset.sample_ids`` (None when absent or empty)."""
    ids = log.dataset.get("sample_ids")
    if ids is None or ids == []:
        return None, None
    if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
        return None, note("unreadable_file", log.path, "eval.dataset.sample_ids is not a list of ints/strings")
    return list(ids), None


def _limited_note(log: _Log, planned: int) -> dict[str, Any] | None:
    """``limited_run`` when the dataset holds more samples than the run planned (``--limit``, ``--sample-id``)."""
    samples = log.dataset.get("samples")
    limit = log.config.get("limit")
    setting = f" (eval.config.limit = {json.dumps(limit)})" if limit is not None else ""
    if _is_count(samples) and samples > planned:
        detail = f"the run was limited to {planned} of {samples} samples{setting}: only those are planned"
        return note("limited_run", log.path, detail)
    if limit is not None and not _is_count(samples):
        detail = f"the run was limited to {planned} samples{setting}; the dataset's size is not recorded"
        return note("limited_run", log.path, detail)
    return None


def _scorer_names(log: _Log) -> list[str]:
    """Scorer names the log's header lists: ``results.scores[].name``, else ``eval.scorers[].name``."""
    names: list[str] = []
    declared: list[Any] = []
    for entries in (
        log.results.get("scores"),
        [log.results.get("scorer")],  # logs written before 'scores' existed
        log.spec.get("scorers"),
    ):
        if isinstance(entries, list) and any(_obj(e) for e in entries):
            declared = entries
            break
    for entry in declared:
        name = (_obj(entry) or {}).get("name")
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def _sample_scores(sample: Mapping[str, Any], default: str | None) -> dict[str, Any]:
    scores = _obj(sample.get("scores"))
    if scores is not None:
        return scores
    old = _obj(sample.get("score"))  # single deprecated 'score' field
    return {default or "score": old} if old is not None else {}


def _scorers(log: _Log) -> tuple[list[str], list[str]]:
    """The scorers the header lists, and every scorer name seen (header first, then samples, sorted)."""
    declared = _scorer_names(log)
    first = declared[0] if declared else None
    in_samples = sorted({k for s in log.samples for k in _sample_scores(s.data, first)} - set(declared))
    return declared, declared + in_samples


def _choose_scorer(log: _Log, score: str | None) -> tuple[str | None, list[str], dict[str, Any] | None]:
    """The scorer to read (see the module docstring), every scorer seen, and a refusing note or None."""
    declared, available = _scorers(log)
    try:
        chosen = choose_score(
            score, available, default=declared[0] if declared else None, what="scorer", source=log.path
        )
    except ScoreChoiceError as exc:
        return None, available, exc.note
    return chosen, available, None


# --- rows ---------------------------------------------------------------------------------------


def _has_output(sample: Mapping[str, Any]) -> bool:
    output = _obj(sample.get("output")) or {}
    choices = output.get("choices")
    completion = output.get("completion")
    return bool(choices) or (isinstance(completion, str) and completion != "")


def _limit_text(sample: Mapping[str, Any]) -> str | None:
    limit = sample.get("limit")
    if limit is None:
        return None
    obj = _obj(limit)
    if obj is None:
        return str(limit)
    kind, value = obj.get("type"), obj.get("limit")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{kind}={value}" if value is not None else str(kind)


def _retries(sample: Mapping[str, Any]) -> list[Any]:
    """The sample's ``error_retries`` (earlier failed attempts), or an empty list."""
    retries = sample.get("error_retries")
    return retries if isinstance(retries, list) else []


def _sample_rows(
    log: _Log, sample: _Sample, case_id: str, scorer: str | None, first_attempt: int
) -> Iterator[dict[str, Any]]:
    """Rows for one sample: its earlier failed attempts, then the sample itself.

    A row whose value is not a score carries ``_value`` (the value) for the log's note.
    """
    base = {
        CANDIDATE: log.model,
        CASE_ID: case_id,
        TRIAL: sample.epoch,
        RUN_ID: log.run_id,
        LINE: sample.line,
        SOURCE: sample.source,
        SCORE: None,
        PASSED: None,
    }
    n_retries = len(_retries(sample.data))
    for k in range(n_retries):
        yield {
            **base,
            ATTEMPT: first_attempt + k,
            EXEC_STATUS: "error",
            SCORE_STATUS: "not_scored",
            HAS_OUTPUT: False,
            LIMIT: None,
        }
    row = {**base, ATTEMPT: first_attempt + n_retries, LIMIT: _limit_text(sample.data)}
    row[HAS_OUTPUT] = _has_output(sample.data)
    if sample.data.get("error"):
        yield {**row, EXEC_STATUS: "error", SCORE_STATUS: "not_scored"}
        return
    row[EXEC_STATUS] = "completed"
    scores = _sample_scores(sample.data, scorer)
    if scorer is None or scorer not in scores:
        yield {**row, SCORE_STATUS: "not_scored"}
        return
    entry = scores[scorer]
    value = entry.get("value") if isinstance(entry, dict) else None
    status, number = grade(value, letters=LETTER_GRADES)
    if number is None:
        yield {**row, SCORE_STATUS: status, "_value": value}
        return
    passed = (number == 1.0) if number in (0.0, 1.0) else None
    # A graded sample has an output the scorer judged, even if its text is empty.
    yield {**row, SCORE_STATUS: status, SCORE: number, PASSED: passed, HAS_OUTPUT: True}


def _value_notes(log: _Log, scorer: str | None, values: list[Any]) -> list[dict[str, Any]]:
    """One note per kind of value of a log's scorer that is not a score (not one per row); nulls say nothing."""
    notes: list[dict[str, Any]] = []
    nonfinite = [v for v in values if isinstance(v, float) and not math.isfinite(v)]
    other = [v for v in values if v is not None and not (isinstance(v, float) and not math.isfinite(v))]
    for kind, found, what in (
        ("not_a_score", other, "is not a score"),
        ("nonfinite_score", nonfinite, "is not finite"),
    ):
        if found:
            example = json.dumps(found[0], default=str)[:80]
            detail = f"{len(found)} value(s) of scorer {scorer!r} {what} (e.g. {example}); read as judge_error"
            notes.append(note(kind, log.path, detail))
    return notes


def _header_notes(log: _Log) -> list[dict[str, Any]]:
    """``run_status`` and ``header_rows_disagree`` notes of one log."""
    notes: list[dict[str, Any]] = []
    if log.status != "success":
        error = _obj(log.doc.get("error"))
        why = f": {str(error.get('message'))[:200]}" if error else ""
        notes.append(note("run_status", log.path, f"the run's status is {log.status!r}, not 'success'{why}"))
    rows = len(log.samples)
    completed = sum(1 for s in log.samples if not s.data.get("error"))
    for key, count, what in (
        ("total_samples", rows, "sample rows"),
        ("completed_samples", completed, "sample rows without an error"),
    ):
        declared = log.results.get(key)
        if _is_count(declared) and declared != count:
            detail = f"header results.{key} = {declared} but the log has {count} {what} (rows are the evidence)"
            notes.append(note("header_rows_disagree", log.path, detail))
    return notes


def _case_reducer(declared: Any) -> str | None:
    """Inspect's ``epochs_reducer`` in evalframe's reducer names (see :func:`evalframe.funnel.reduce_case`).

    ``mean`` is ``mean``; ``pass_at_k`` and ``max`` pass a case when any epoch passed (``any``);
    ``at_least_k`` is ``at_least:k``; others (``median``, ``mode``, custom reducers) keep Inspect's name.
    Several reducers are joined with ``+``; None when the header records none.
    """
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if not names:
        return None
    out = []
    for name in map(str, names):
        head, _, k = name.rpartition("_")
        if name in ("max",) or head == "pass_at" and k.isdigit():
            out.append("any")
        elif head == "at_least" and k.isdigit():
            out.append(f"at_least:{k}")
        else:
            out.append(name)
    return "+".join(out)


def _log_info(log: _Log, *, scorer: str | None, available: list[str], epochs: int) -> dict[str, Any]:
    ids = log.dataset.get("sample_ids")
    packages = _obj(log.spec.get("packages")) or {}
    error = _obj(log.doc.get("error"))
    return {
        "source": log.path,
        "format": log.fmt,
        "header": log.header_member,
        "readable": True,
        "inspect_version": packages.get("inspect_ai"),
        "status": log.status,
        "task": log.task,
        "task_id": log.spec.get("task_id"),
        "model": log.model,
        "run_id": log.spec.get("run_id"),
        "eval_id": log.spec.get("eval_id"),
        "eval_set_id": log.spec.get("eval_set_id"),
        "created": log.spec.get("created"),
        "dataset_name": log.dataset.get("name"),
        "dataset_samples": log.dataset.get("samples"),
        "sample_ids_declared": len(ids) if isinstance(ids, list) else None,
        "limit": log.config.get("limit"),
        "epochs": epochs,
        "case_reducer": _case_reducer(log.config.get("epochs_reducer")),
        "total_samples": log.results.get("total_samples"),
        "completed_samples": log.results.get("completed_samples"),
        "scorer": scorer,
        "scorers": available,
        "samples_read": len(log.samples),
        "attempts_read": sum(1 + len(_retries(s.data)) for s in log.samples),
        "samples_with_error": sum(1 for s in log.samples if s.data.get("error")),
        "error": (str(error.get("message"))[:500] if error else None),
    }


# --- the import ---------------------------------------------------------------------------------


def read(paths: Sequence[PathLike], *, score: str | None = None) -> Imported:
    """Read Inspect AI eval logs into a plan, a status ledger, notes and per-file facts.

    Parameters
    ----------
    paths
        ``.eval`` archives, ``.json`` logs and folders (a folder stands for
        every ``*.eval`` and ``*.json`` log below it; an eval set's
        ``eval-set.json``, ``logs.json`` and ``.eval-set-id`` are skipped).
        Several logs combine into one plan and one ledger; the order of
        ``paths`` never changes the result.
    score
        Name of the scorer to read (a key of each sample's ``scores``); it
        must be a scorer of every log read. Default: per log, the first
        scorer its header lists (``results.scores``, else ``eval.scorers``);
        a log whose header lists none uses the one scorer its samples carry.
        A sample without the chosen scorer is ``not_scored``.

    Returns
    -------
    Imported
        ``plan``: the planned units (``eval.dataset.sample_ids`` × epochs ×
        ``eval.model``, unioned over logs), cases with a ``task`` column.
        ``ledger``: one row per attempt with ``candidate`` (String, the
        model), ``case_id`` (String; ``<task>/<id>`` when several tasks are
        read), ``trial`` (Int64, the epoch), ``attempt`` (Int64), ``run_id``
        (String), ``exec_status`` (``completed``/``error``),
        ``score_status`` (``scored``/``judge_error``/``not_scored``),
        ``score`` (Float64), ``passed`` (Boolean; only when every grade is 0
        or 1 — otherwise the column is left out so the audit's declared
        ``grade``/``pass_threshold`` decides), ``has_output`` (Boolean),
        ``limit`` (String, ``<type>=<value>``), ``line`` (Int64: the
        sample's 1-based position in the ``samples`` array, or among the
        archive's sample members) and ``source`` (String: the file, plus
        ``!samples/<id>_epoch_<n>.json`` for archive members).
        ``notes`` (none refusing): ``run_status``, ``header_rows_disagree``,
        ``limited_run``, ``plan_from_rows``, ``duplicate_import``,
        ``id_normalised``, ``not_a_score``, ``nonfinite_score``.
        ``info``: one dict per log (format, inspect version, status, task,
        model, run_id, eval_id, eval_set_id, created, dataset size, declared
        sample ids, limit, epochs, header totals, chosen scorer, samples read).

    Raises
    ------
    InputFormatError
        When a path does not exist, or an archive's members take more than
        ``Limits.archive_bytes`` decompressed (see :class:`~evalframe.load.Limits`).
    ImportRefused
        With every note, when any refuses: ``unreadable_file`` (a truncated
        or oversized archive member, invalid JSON, a missing header or key;
        naming the file and member or line), ``no_export`` (a folder with no
        log), ``unknown_score``/``ambiguous_score``, ``empty_plan`` and any
        problem of the plan itself (e.g. a padded sample id).

    Examples
    --------
    >>> imported = read(["../shared/data/real/inspect_ai/UKGovernmentBEIS-inspect_ai/tests/log/test_eval_log/"
    ...                  "log_streaming.eval"])
    >>> imported.plan.candidates, imported.plan.trials, imported.plan.n_units
    (('azureai/Meta-Llama-3-1-405B-Instruct-jqf',), 2, 4)
    >>> imported.ledger.select("case_id", "trial", "attempt", "exec_status", "score_status", "score", "passed")
    shape: (4, 7)
    ┌─────────┬───────┬─────────┬─────────────┬──────────────┬───────┬────────┐
    │ case_id ┆ trial ┆ attempt ┆ exec_status ┆ score_status ┆ score ┆ passed │
    │ ---     ┆ ---   ┆ ---     ┆ ---         ┆ ---          ┆ ---   ┆ ---    │
    │ str     ┆ i64   ┆ i64     ┆ str         ┆ str          ┆ f64   ┆ bool   │
    ╞═════════╪═══════╪═════════╪═════════════╪══════════════╪═══════╪════════╡
    │ 1       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 0.0   ┆ false  │
    │ 1       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 1     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    │ 2       ┆ 2     ┆ 1       ┆ completed   ┆ scored       ┆ 1.0   ┆ true   │
    └─────────┴───────┴─────────┴─────────────┴──────────────┴───────┴────────┘
    >>> imported.notes.select("kind", "detail").rows()
    [('limited_run', 'the run was limited to 2 of 100 samples (eval.config.limit = 2): only those are planned')]
    """
    found, notes = find_files(paths, is_export=_is_log, what=".eval or .json Inspect log")
    files = [f for f in found if f.name not in _COMPANIONS]
    if found and not files:
        named = "; ".join(str(f) for f in found)
        notes.append(note("no_export", named, "an eval set's manifest, index or id file is not a log: name its logs"))
    source = "; ".join(str(f) for f in files) if files else "inspect_ai"
    info: list[dict[str, Any]] = []
    logs: list[_Log] = []
    for path in files:
        log, file_notes = _read_log(path)
        notes.extend(file_notes)
        if log is None:
            info.append({"source": str(path), "format": path.suffix.lstrip("."), "readable": False})
        else:
            logs.append(log)
    prefixed = len({log.task for log in logs}) > 1

    def case_of(task: str, raw: int | str) -> str:
        return f"{task}/{raw}" if prefixed else str(raw)

    units: list[tuple[str, str, int, str]] = []
    chosen: dict[str, str | None] = {}
    # sample-id spellings per (task, string form): to flag 1 vs "1"
    spellings: dict[tuple[str, str], set[str]] = defaultdict(set)
    ids_in_log: dict[str, set[str]] = defaultdict(set)
    for log in logs:
        epochs, epochs_note = _epochs(log)
        declared, id_note = _declared_ids(log)
        notes.extend(n for n in (epochs_note, id_note) if n is not None)
        notes.extend(_header_notes(log))
        raw_ids = [s.raw_id for s in log.samples]
        if declared is None:
            plan_ids = sorted(set(raw_ids), key=lambda r: (str(r), type(r).__name__))
            if id_note is None:
                n = len({str(i) for i in plan_ids})
                taken = f"it was taken from the {n} sample id(s) present" if n else "the log has no samples: no unit"
                notes.append(note("plan_from_rows", log.path, f"the header lists no eval.dataset.sample_ids; {taken}"))
        else:
            plan_ids = declared
            limited = _limited_note(log, len({str(i) for i in declared}))
            if limited is not None:
                notes.append(limited)
        for raw in [*plan_ids, *raw_ids]:
            spellings[(log.task, str(raw))].add(type(raw).__name__)
            ids_in_log[log.path].add(str(raw))
        too_many = planned_size(len(plan_ids) * epochs, log.path, "eval.config.epochs × sample ids")
        if too_many is not None:
            notes.append(too_many)
        else:
            units.extend(
                (log.model, case_of(log.task, raw), t, log.task) for raw in plan_ids for t in range(1, epochs + 1)
            )
        scorer, available, score_note = _choose_scorer(log, score)
        if score_note is not None:
            notes.append(score_note)
        chosen[log.path] = scorer
        facts = _log_info(log, scorer=scorer, available=available, epochs=epochs)
        facts["case_id_prefix"] = f"{log.task}/" if prefixed else None
        info.append(facts)
    for log in logs:
        for raw in sorted(ids_in_log[log.path]):
            kinds = spellings[(log.task, raw)]
            if len(kinds) > 1:
                detail = f"sample id {raw!r} appears as {' and '.join(sorted(kinds))}; both read as one case"
                notes.append(note("id_normalised", log.path, detail, case_id=case_of(log.task, raw)))

    rows = _attempt_rows(logs, chosen, case_of, notes)
    frame = pl.DataFrame(
        units, schema={CANDIDATE: pl.String, CASE_ID: pl.String, TRIAL: pl.Int64, TASK: pl.String}, orient="row"
    ).unique()
    plan, plan_problems = build_plan(frame.sort(CANDIDATE, CASE_ID, TRIAL), source=source)
    if not logs:  # nothing was readable: the notes say why, an empty plan would only repeat it
        plan_problems = plan_problems.clear()
    ledger = pl.DataFrame(rows, schema=_LEDGER_SCHEMA).sort([*UNIT_KEY, ATTEMPT, SOURCE, LINE])
    scored = ledger.filter(pl.col(SCORE_STATUS) == "scored")
    if scored.filter(~pl.col(SCORE).is_in([0.0, 1.0])).height:
        ledger = ledger.drop(PASSED)
    return finish(plan, ledger, [notes, plan_problems], sorted(info, key=lambda d: str(d["source"])))


def _attempt_rows(
    logs: Sequence[_Log],
    chosen: Mapping[str, str | None],
    case_of: Callable[[str, int | str], str],
    notes: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Ledger rows of every log: runs of one (task, model) numbered on by start time, each sample read once."""
    groups: dict[tuple[str, str], list[_Log]] = defaultdict(list)
    for log in logs:
        groups[(log.task, log.model)].append(log)
    rows: list[dict[str, Any]] = []
    first_seen: dict[str, str] = {}  # sample identity -> where it was first read
    for group in groups.values():
        next_attempt: dict[tuple[str, int], int] = defaultdict(lambda: 1)
        for log in sorted(group, key=_started):
            scorer = chosen[log.path]
            used: dict[tuple[str, int], int] = {}
            values: list[Any] = []
            for sample in log.samples:
                identity = sample.identity
                if identity in first_seen:
                    detail = (
                        f"sample {sample.raw_id!r} epoch {sample.epoch} ({identity.split(' ')[0]} equal) was already "
                        f"read from {first_seen[identity]}: one attempt imported twice, read once"
                    )
                    case_id = case_of(log.task, sample.raw_id)
                    notes.append(note("duplicate_import", sample.source, detail, case_id=case_id, line=sample.line))
                    continue
                first_seen[identity] = sample.source
                case_id = case_of(log.task, sample.raw_id)
                key = (case_id, sample.epoch)
                for row in _sample_rows(log, sample, case_id, scorer, next_attempt[key]):
                    if "_value" in row:
                        values.append(row.pop("_value"))
                    rows.append(row)
                    used[key] = max(used.get(key, 0), row[ATTEMPT])
            for key, last in used.items():
                next_attempt[key] = last + 1
            notes.extend(_value_notes(log, scorer, values))
    return rows

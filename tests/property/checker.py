"""An independent reading of SPEC §2-§3 for a CSV plan and a CSV ledger, written plainly.

It imports nothing from evalframe: the csv module reads the records, dicts and sets do the rest. Given the
bytes of a plan and of a ledger (and the flags of the command), :func:`expect` says what the audit must do:

* exit 2 (an input error: UTF-16, binary data, an empty file);
* exit 1 (refused) with the set of refusing problems ``(role, kind, line)``, role ``plan`` or ``results``;
* exit 0 with the funnel counts of every candidate (SPEC §2, retry policy ``first``, binary grades).

A row whose trial, attempt, grade or has_output token did not parse has that one problem: it is no duplicate
key and no status contradiction (settled for both engines, issue 39). Everything must match exactly.

Rules, in the order a reader meets them (SPEC §3):

* bytes: a UTF-16 byte-order mark or a NUL byte is an input error; a UTF-8 BOM is accepted at the very start
  only (``misplaced_bom`` on every other line holding one); bytes that are not UTF-8 are
  ``undecodable_bytes`` on their line;
* line endings: records end with LF, CRLF or CR; a file whose records end in more than one way is refused
  once (``mixed_line_endings``) at the first line that ends differently from the first; a line break inside
  a quoted field is data. Line numbers are physical lines, each LF, CRLF or lone CR ending one;
* records (RFC 4180 via the csv module): a malformed quote stops reading (``malformed_quoting`` at the line
  where its record starts); a blank line inside the data is ``blank_line``; a record with another number of
  fields than the header is ``field_count``; blank lines after the last record are ignored;
* header: a name the loader adds (``line``, ``source``) is ``unexpected_column``; a repeated name is
  ``repeated_column`` (the first one is read);
* text stays text: identifiers and plan columns are compared exactly as written.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: Unicode's White_Space characters: an identifier starting or ending with one is padded.
WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)
EXEC = ("completed", "timeout", "error", "not_started")
SCORE_STATUS = ("scored", "judge_error", "not_scored")
#: The one legacy spelling of a score status that is read (``unscored``).
SCORE_STATUS_ALIAS = {"unscored": "not_scored"}
LEDGER_COLUMNS = frozenset(
    (
        "candidate",
        "case_id",
        "trial",
        "attempt",
        "run_id",
        "exec_status",
        "score_status",
        "score",
        "passed",
        "has_output",
        "answer",
        "limit",
        "dataset_version",
        "case_hash",
    )
)
#: Columns the loader adds to every row: refused as input columns.
LOADER_COLUMNS = ("line", "source")
#: Plan columns that would stand for what the ledger or the audit gives per attempt or unit.
PLAN_RESERVED = frozenset(
    {
        "trial",
        "attempt",
        "run_id",
        "exec_status",
        "score_status",
        "score",
        "passed",
        "has_output",
        "answer",
        "limit",
        "counted_attempt",
        "attempts",
        "outcome",
        "_cand",
        "_case",
        "_uid",
        "_trial",
        "dataset_version_right",
        "case_hash_right",
    }
)
INT64_MAX = 2**63 - 1
COUNTS = (
    "planned",
    "attempted",
    "completed",
    "with_output",
    "scored",
    "passed",
    "failed",
    "missing",
    "not_started",
    "exec_failed",
    "no_output",
    "judge_failed",
    "not_scored",
)
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_BREAK = re.compile(r"\r\n|\r|\n")
_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")

Problem = tuple[str, str, int | None]
#: One attempt of a unit: (attempt, exec_status, score_status, has_output, passed).
Attempt = tuple[int, str, str, bool, bool | None]


class InputError(Exception):
    """The file cannot be read at all (exit 2)."""


@dataclass
class Table:
    """A CSV file as read: kept column names, records (line, values by name) and problems (kind, line)."""

    columns: list[str]
    rows: list[tuple[int, dict[str, str]]]
    problems: set[tuple[str, int | None]]


@dataclass
class Expected:
    """What the audit must do."""

    exit: int
    refusing: set[Problem] = field(default_factory=set)
    optional: set[Problem] = field(default_factory=set)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def agrees(self, exit_code: int, refusing: set[Problem], counts: dict[str, dict[str, int]]) -> str | None:
        """None when evalframe's outcome is this one; else what differs, for a person."""
        if exit_code != self.exit:
            return f"exit {exit_code}, expected {self.exit} (expected refusing {sorted(self.refusing, key=str)})"
        if self.exit == 1:
            absent = self.refusing - refusing
            extra = refusing - self.refusing - self.optional
            if absent or extra:
                return (
                    f"refusing problems differ: absent {sorted(absent, key=str)}, unexpected {sorted(extra, key=str)}"
                )
        if self.exit == 0 and counts != self.counts:
            return f"counts {counts}, expected {self.counts}"
        return None


def _line_ending_problem(text: str) -> int | None:
    """The line of the first record that ends differently from the first record, if any (quotes respected)."""
    first: str | None = None
    line, i, n = 1, 0, len(text)
    quoted, at_start = False, True
    while i < n:
        ch = text[i]
        if quoted:
            if ch == '"':
                if i + 1 < n and text[i + 1] == '"':
                    i += 2
                    continue
                quoted = False
            elif ch in "\r\n":
                width = 2 if text.startswith("\r\n", i) else 1
                line += 1
                i += width
                continue
            i += 1
            continue
        if ch == '"' and at_start:
            quoted, at_start = True, False
        elif ch == ",":
            at_start = True
        elif ch in "\r\n":
            ending = "\r\n" if text.startswith("\r\n", i) else ch
            if first is None:
                first = ending
            elif ending != first:
                return line
            line += 1
            i += len(ending)
            at_start = True
            continue
        else:
            at_start = False
        i += 1
    return None


def read_csv(data: bytes) -> Table:
    """Read CSV bytes by the rules of the module docstring.

    Raises
    ------
    InputError
        UTF-16, a NUL byte, or no header line.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data:
        raise InputError
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    problems: set[tuple[str, int | None]] = set()
    for number, raw in enumerate(_BREAK_BYTES.split(data), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.add(("undecodable_bytes", number))
    text = data.decode("utf-8", errors="replace")
    for number, piece in enumerate(_BREAK.split(text), start=1):
        if "\ufeff" in piece:
            problems.add(("misplaced_bom", number))
    mixed = _line_ending_problem(text)
    if mixed is not None:
        problems.add(("mixed_line_endings", mixed))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error:
            problems.add(("malformed_quoting", start))
            break
        records.append((start, [v.replace("\ufeff", "") for v in record]))
    if not records:
        raise InputError
    header_line, header = records[0]
    kept: dict[str, int] = {}
    for i, name in enumerate(header):
        if name in LOADER_COLUMNS:
            problems.add(("unexpected_column", header_line))
        elif name in kept:
            problems.add(("repeated_column", header_line))
        else:
            kept[name] = i
    body = records[1:]
    while body and not body[-1][1]:
        body.pop()
    rows = []
    for start, record in body:
        if not record:
            problems.add(("blank_line", start))
        elif len(record) != len(header):
            problems.add(("field_count", start))
        else:
            rows.append((start, {name: record[i] for name, i in kept.items()}))
    return Table(list(kept), rows, problems)


def _padded(value: str) -> bool:
    return value != "" and (value[0] in WHITE_SPACE or value[-1] in WHITE_SPACE)


def _identifier(value: str) -> str | None:
    """The problem kind of an identifier, if any."""
    if value == "":
        return "empty_identifier"
    return "padded_identifier" if _padded(value) else None


def _integer(token: str, *, zero: bool) -> int | None:
    """A trial (from 0) or attempt (from 1): digits without sign, padding or leading zero, within Int64."""
    if not (re.fullmatch(r"[1-9][0-9]*", token) or (zero and token == "0")):
        return None
    value = int(token)
    return value if value <= INT64_MAX else None


def _binary(token: str, *, column: str) -> tuple[bool, float | None]:
    """(valid, value) of a binary grade token: ``passed`` is exactly 0 or 1; ``score`` a plain number 0 or 1."""
    if column == "passed":
        return (token in ("0", "1"), float(token) if token in ("0", "1") else None)
    if not _PLAIN_NUMBER.fullmatch(token):
        return False, None
    value = float(token)
    return value in (0.0, 1.0), value


#: Plan problems that leave the cases (each id as written, a repeated one once, its first row) and the
#: candidates known: the ledger is checked against them in the same run, its problems listed too.
CASE_SET_KEPT = frozenset({"duplicate_case", "padded_identifier", "repeated_candidate"})


def _plan(table: Table, candidates: Sequence[str]) -> tuple[set[Problem], dict[str, dict[str, str]]]:
    """The plan's refusing problems and its cases (by case_id)."""
    found: set[Problem] = {("plan", kind, line) for kind, line in table.problems}
    if "case_id" not in table.columns:
        return found | {("plan", "missing_column", None)}, {}
    reserved = [c for c in table.columns if c in PLAN_RESERVED]
    if reserved:
        return found | {("plan", "unexpected_column", None)}, {}
    if not candidates or len(set(candidates)) != len(candidates):
        found.add(("plan", "empty_candidates" if not candidates else "repeated_candidate", None))
    if not table.rows:
        found.add(("plan", "empty_plan", None))
    by_id: dict[str, list[int]] = defaultdict(list)
    for line, row in table.rows:
        by_id[row["case_id"]].append(line)
        kind = _identifier(row["case_id"])
        if kind:
            found.add(("plan", kind, line))
    for lines in by_id.values():
        if len(lines) > 1:
            found.update(("plan", "duplicate_case", line) for line in lines)
    first: dict[str, dict[str, str]] = {}
    for _, row in table.rows:
        first.setdefault(row["case_id"], row)
    return found, first


def expect(
    plan_bytes: bytes,
    results_bytes: bytes,
    *,
    candidates: Sequence[str],
    trials: int = 1,
    run_id: str | None = None,
) -> Expected:
    """What ``evalframe audit --plan P --results R --candidates ... --trials N [--run-id X]`` must do."""
    try:
        plan_table = read_csv(plan_bytes)
    except InputError:
        return Expected(2)
    plan_problems, cases = _plan(plan_table, candidates)
    if plan_problems and not (cases and candidates and {k for _, k, _ in plan_problems} <= CASE_SET_KEPT):
        return Expected(1, plan_problems)
    try:
        table = read_csv(results_bytes)
    except InputError:
        return Expected(2)
    refusing: set[Problem] = {("results", kind, line) for kind, line in table.problems}
    optional: set[Problem] = set()
    cols = set(table.columns)
    structural: set[Problem] = set()
    for name in table.columns:
        if name not in LEDGER_COLUMNS:
            structural.add(("results", "unexpected_column", 1))
    if "candidate" not in cols and len(candidates) != 1:
        structural.add(("results", "missing_column", None))
    if "case_id" not in cols:
        structural.add(("results", "missing_column", None))
    shape = (
        "status"
        if "exec_status" in cols
        else "answers"
        if "answer" in cols
        else "grades"
        if cols & {"passed", "score"}
        else None
    )
    if shape is None:
        structural.add(("results", "missing_column", None))
    plan_columns = set(plan_table.columns)
    if shape == "answers" and "expected" not in plan_columns:
        structural.add(("results", "missing_expected", None))
    if structural - {("results", "unexpected_column", 1)}:
        return Expected(1, plan_problems | refusing | structural)
    refusing |= plan_problems | structural  # stray columns and a plan's repeated case hide no row problem

    def flag(kind: str, line: int) -> None:
        refusing.add(("results", kind, line))

    # (candidate, case_id, trial, attempt) -> lines; the unit's attempts for the funnel
    keys: dict[tuple[str, str, int, int], list[int]] = defaultdict(list)
    attempts: dict[tuple[str, str, int], list[Attempt]] = defaultdict(list)
    for line, row in table.rows:
        cand = row.get("candidate", candidates[0])
        case = row["case_id"]
        bad_key = bad_value = False
        for name in ("candidate", "case_id", "run_id"):
            if name in row and _identifier(row[name]):
                flag(_identifier(row[name]) or "", line)
        trial = attempt = 1
        for name in ("trial", "attempt"):
            if name in row:
                value = _integer(row[name], zero=name == "trial")
                if value is None:
                    flag("invalid_integer", line)
                    bad_key = True
                elif name == "trial":
                    trial = value
                else:
                    attempt = value
        values: dict[str, float | None] = {}
        for name in ("passed", "score"):
            if name in row:
                token = row[name]
                if token == "" and shape == "status":
                    values[name] = None
                    continue
                ok, value = _binary(token, column=name)
                values[name] = value if ok else None
                if not ok:
                    flag("invalid_grade", line)
                    bad_value = True
        if shape == "answers":
            exec_status, score_status, has_output = "completed", "scored", True
            if row["answer"] == "":
                flag("empty_value", line)
            expected = cases.get(case, {}).get("expected")
            passed: bool | None = None if expected is None else row["answer"] == expected
        elif shape == "grades":
            exec_status, score_status, has_output = "completed", "scored", True
            grade = values["passed"] if "passed" in values else values.get("score")
            passed = None if grade is None else grade == 1.0
        else:
            exec_status = row["exec_status"]
            if exec_status == "":
                flag("empty_value", line)
            if exec_status not in EXEC:
                flag("invalid_status", line)
                bad_value = True
            graded = values.get("score", values.get("passed"))
            if "score_status" in row:
                score_status = SCORE_STATUS_ALIAS.get(row["score_status"], row["score_status"])
                if score_status == "":
                    flag("empty_value", line)
            else:
                score_status = "scored" if graded is not None else "not_scored"
            if score_status not in SCORE_STATUS:
                flag("invalid_status", line)
                bad_value = True
            has_output = exec_status == "completed"
            if "has_output" in row and row["has_output"] != "":
                token = row["has_output"]
                if token in ("true", "1"):
                    has_output = True
                elif token in ("false", "0"):
                    has_output = False
                else:
                    flag("invalid_grade", line)
                    bad_value = True
            passed = (values["passed"] == 1.0) if values.get("passed") is not None else None
            if "passed" not in values and values.get("score") is not None:
                passed = values["score"] == 1.0
            has_score = any(v is not None for v in values.values())
            contradictions = (
                has_score and score_status != "scored",
                score_status == "scored" and not has_score,
                score_status == "scored" and exec_status != "completed",
                score_status == "scored" and exec_status == "completed" and not has_output,
            )
            # A row whose token did not parse has that one problem: no contradiction is read from it.
            if exec_status in EXEC and score_status in SCORE_STATUS and any(contradictions):
                if not (bad_value or bad_key):
                    flag("status_inconsistent", line)
        # identity against the plan
        if cand not in candidates:
            flag("unknown_candidate", line)
        elif case not in cases:
            flag("unknown_case", line)
        elif "trial" in row and not bad_key and not 1 <= trial <= trials:
            flag("trial_out_of_range", line)
        if not bad_key:  # a key holding a value that did not parse repeats none
            keys[(cand, case, trial, attempt)].append(line)
        if run_id is not None and row.get("run_id") != run_id:
            flag("run_mismatch", line)
        for name, kind in (("dataset_version", "version_mismatch"), ("case_hash", "hash_mismatch")):
            if name in row and name in plan_columns and case in cases and row[name] != cases[case][name]:
                flag(kind, line)
        if not bad_key:
            attempts[(cand, case, trial)].append((attempt, exec_status, score_status, has_output, passed))
    for lines in keys.values():
        if len(lines) > 1:
            refusing.update(("results", "duplicate_key", line) for line in lines)
    if refusing:
        return Expected(1, refusing, optional)
    return Expected(0, counts=funnel(attempts, candidates, cases, trials))


def funnel(
    attempts: dict[tuple[str, str, int], list[Attempt]], candidates: Sequence[str], cases: Iterable[str], trials: int
) -> dict[str, dict[str, int]]:
    """The funnel counts (SPEC §2) of every candidate: planned units are ``cases`` × trials ``1..trials``.

    ``attempts`` maps a unit ``(candidate, case, trial)`` to its attempts ``(attempt, exec_status,
    score_status, has_output, passed)``; a planned unit without any is missing.
    """
    counts: dict[str, dict[str, int]] = {}
    for cand in sorted(candidates):
        tally = dict.fromkeys(COUNTS, 0)
        for case in cases:
            for trial in range(1, trials + 1):
                tally["planned"] += 1
                tally[_outcome(attempts.get((cand, case, trial), []))] += 1
        tally["attempted"] = tally["planned"] - tally["missing"] - tally["not_started"]
        tally["scored"] = tally["failed"] + tally["passed"]
        tally["with_output"] = tally["scored"] + tally["judge_failed"] + tally["not_scored"]
        tally["completed"] = tally["with_output"] + tally["no_output"]
        counts[cand] = tally
    return counts


def _outcome(unit: list[Attempt]) -> str:
    """The outcome of a unit under retry policy ``first``: its lowest attempt counts (SPEC §2, §4)."""
    if not unit:
        return "missing"
    _, exec_status, score_status, has_output, passed = min(unit, key=lambda a: a[0])
    if exec_status == "not_started":
        return "not_started"
    if exec_status in ("timeout", "error"):
        return "exec_failed"
    if not has_output:
        return "no_output"
    if score_status == "judge_error":
        return "judge_failed"
    if score_status != "scored":
        return "not_scored"
    return "passed" if passed else "failed"

"""An OpenAI Evals record log as read: the spec line, events grouped by sample, the final report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evalframe.importers._kit import Unreadable, note, read_json_lines

#: Key of a ``match`` event's grade (read when ``score`` is None).
MATCH_KEY: Final = "correct"
#: Key of a ``metrics`` event's grade (read when ``score`` is None).
METRICS_KEY: Final = "score"
#: Event types that carry a grade.
GRADE_EVENTS: Final = ("match", "metrics")
#: Event types that show the model produced something for the sample.
OUTPUT_EVENTS: Final = ("sampling", "match", "metrics", "cond_logp", "pick_option", "embedding")
#: Keys every event line must have.
EVENT_KEYS: Final = ("sample_id", "type", "data")
#: ``final_report`` keys recomputed from the events when nothing is declared: key -> event type graded.
REPORT_KEYS: Final = {"accuracy": "match", METRICS_KEY: "metrics"}
#: ``final_report`` key some evals use for the number of samples they ran.
REPORT_SAMPLES: Final = "n_samples"


@dataclass
class _Sample:
    """The events of one sample id in one log."""

    first_line: int
    types: dict[str, int] = field(default_factory=dict)
    grades: list[tuple[int, Any]] = field(default_factory=list)  # (line, raw grade value)


@dataclass
class _Events:
    """What one log's lines hold: its spec, its events by sample, its final report (malformed lines noted)."""

    source: str
    notes: list[dict[str, Any]] = field(default_factory=list)
    spec: dict[str, Any] | None = None
    spec_line: int | None = None
    final_report: Any = None
    final_lines: list[int] = field(default_factory=list)
    samples: dict[str, _Sample] = field(default_factory=dict)
    type_counts: dict[str, int] = field(default_factory=dict)
    #: Grade events: (type, data, the sample, line).
    grade_events: list[tuple[str, dict[str, Any], _Sample, int]] = field(default_factory=list)
    events: int = 0
    foreign_runs: set[str] = field(default_factory=set)
    no_sample: int = 0

    def unreadable(self, line: int | None, detail: str) -> None:
        """Note a malformed line (refusing)."""
        self.notes.append(note("unreadable_file", self.source, detail, line=line))

    def add_event(self, number: int, obj: dict[str, Any]) -> None:
        """Count one event line and group it under its sample."""
        absent = [k for k in EVENT_KEYS if k not in obj]
        if absent or not isinstance(obj.get("type"), str):
            self.unreadable(number, f"an event without {', '.join(absent) or 'a string type'}")
            return
        self.events += 1
        etype: str = obj["type"]
        self.type_counts[etype] = self.type_counts.get(etype, 0) + 1
        run = obj.get("run_id")
        if run is not None and self.spec is not None and run != self.spec.get("run_id"):
            self.foreign_runs.add(str(run))
        sid = obj["sample_id"]
        if sid is None:
            self.no_sample += 1
            return
        if not isinstance(sid, str):
            detail = f"sample_id {sid!r} is not a string; read as {str(sid)!r}"
            self.notes.append(note("id_normalised", self.source, detail, line=number, case_id=str(sid)))
            sid = str(sid)
        sample = self.samples.setdefault(sid, _Sample(first_line=number))
        sample.types[etype] = sample.types.get(etype, 0) + 1
        payload = obj["data"]
        if etype in GRADE_EVENTS and isinstance(payload, dict):
            self.grade_events.append((etype, payload, sample, number))


def _is_log(path: Path) -> bool:
    """A record log found in a folder: ``*.jsonl``, or a ``*.log`` whose first line is the spec."""
    if path.suffix == ".jsonl":
        return True
    if path.suffix != ".log":
        return False
    try:
        with path.open("rb") as handle:
            return handle.read(16).removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b'{"spec"')
    except OSError:
        return False


def _candidate(spec: dict[str, Any]) -> str | None:
    """The spec's ``completion_fns`` joined with ``,``, else its ``model`` / ``model_name``."""
    fns = spec.get("completion_fns")
    if isinstance(fns, list) and fns and all(isinstance(f, str) for f in fns):
        return ",".join(fns)
    for key in ("model", "model_name"):
        if isinstance(spec.get(key), str):
            return str(spec[key])
    return None


def _scan(path: Path) -> tuple[_Events, bool]:
    """Every line of a log, and whether it is a log at all (False: unreadable, or no spec header first)."""
    found = _Events(str(path))
    try:
        lines, line_notes = read_json_lines(path)
    except Unreadable as exc:
        found.notes.append(exc.note)
        return found, False
    found.notes.extend(line_notes)
    for number, obj in lines:
        if not isinstance(obj, dict):
            found.unreadable(number, f"expected a JSON object, found {type(obj).__name__}")
        elif found.spec_line is None:
            found.spec_line = number
            if not isinstance(obj.get("spec"), dict):
                found.unreadable(number, 'the first line is not the {"spec": {...}} header')
                return found, False
            found.spec = obj["spec"]
        elif "spec" in obj:
            found.unreadable(number, "a second spec line: one record log holds one run")
        elif "final_report" in obj:
            found.final_report = obj["final_report"]
            found.final_lines.append(number)
        else:
            found.add_event(number, obj)
    return found, True

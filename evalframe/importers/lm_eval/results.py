"""Facts of an lm-eval results file: the model that ran, ``n-samples``, tasks, aggregates, and who ran a file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from evalframe.importers._kit import json_object
from evalframe.importers.lm_eval.files import UNKNOWN_MODEL, _Header

_MODEL_ARG_KEYS: Final = ("pretrained", "model", "model_name", "engine", "path")


@dataclass(frozen=True)
class _Run:
    """Who ran a file: candidate, how that name was found, the results file."""

    candidate: str
    candidate_from: str
    header: _Header | None


def _model_of(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """The model name a results file records, and where it was found.

    Examples
    --------
    >>> _model_of({"config": {"model_args": "pretrained=/gpfs/hf-models/FLOR-760M,trust_remote_code=True"}})
    ('/gpfs/hf-models/FLOR-760M', 'config.model_args.pretrained')
    >>> _model_of({"config": {"model_args": {"dtype": "bfloat16"}}, "model_name": "google/gemma-2b"})
    ('google/gemma-2b', 'model_name')
    """
    config = json_object(data.get("config"))
    args: object = config.get("model_args")
    parsed: dict[str, object] = {}
    if isinstance(args, dict):
        parsed = {str(k): v for k, v in args.items()}
    elif isinstance(args, str):
        for part in args.split(","):
            arg, sep, text = part.partition("=")
            if sep:
                parsed.setdefault(arg.strip(), text.strip())
    for name in _MODEL_ARG_KEYS:
        value = parsed.get(name)
        if isinstance(value, str) and value:
            return value, f"config.model_args.{name}"
    for where, value in (("model_name", data.get("model_name")), ("config.model_name", config.get("model_name"))):
        if isinstance(value, str) and value:
            return value, where
    return None


def _n_samples(data: Mapping[str, Any] | None, task: str) -> tuple[int | None, int | None]:
    """(original, effective) of a task from a results file's ``n-samples``."""
    entry = _dig(data, "n-samples", task)
    if not isinstance(entry, dict):
        return None, None

    def count(v: object) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    return count(entry.get("original")), count(entry.get("effective"))


def _header_tasks(data: Mapping[str, Any] | None) -> list[str]:
    block = _dig(data, "n-samples")
    return sorted(str(t) for t in block) if isinstance(block, dict) else []


def _aggregates(data: Mapping[str, Any] | None, task: str) -> dict[str, Any]:
    """The ``"<metric>,<filter>"`` aggregate values of a task (report only, never evidence)."""
    entry = _dig(data, "results", task)
    if not isinstance(entry, dict):
        return {}
    return {str(k): v for k, v in entry.items() if "," in str(k)}


def _header_filters(data: Mapping[str, Any] | None, task: str) -> set[str]:
    return {k.rsplit(",", 1)[1] for k in _aggregates(data, task)}


def _dig(data: Mapping[str, Any] | None, *keys: str) -> Any:
    """``data[k1][k2]…``, or None when any level is absent or not an object."""
    value: Any = data
    for k in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(k)
    return value


def _run_of(header: _Header | None) -> _Run:
    """Who ran the files of a results file: the model it records, else :data:`UNKNOWN_MODEL`."""
    if header is not None and header.data is not None:
        model = _model_of(header.data)
        if model is not None:
            return _Run(model[0], model[1], header)
        return _Run(UNKNOWN_MODEL, "not recorded in the results file", header)
    return _Run(UNKNOWN_MODEL, "no results file", header)

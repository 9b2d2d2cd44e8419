"""Facts of an lm-eval results file: the model that ran, ``n-samples``, tasks, aggregates, and who ran a file."""

from __future__ import annotations

import hashlib
import json
import re
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
    parsed = _model_args(config)
    for name in _MODEL_ARG_KEYS:
        value = parsed.get(name)
        if isinstance(value, str) and value:
            return value, f"config.model_args.{name}"
    for where, value in (("model_name", data.get("model_name")), ("config.model_name", config.get("model_name"))):
        if isinstance(value, str) and value:
            return value, where
    return None


#: ``config`` keys that say how the harness ran (batching, device, caching, the bootstrap of the aggregate
#: stderr), never what one document's grade measures; ``limit`` chooses which documents run (the plan), not
#: what each one is.
_NOT_SETTINGS: Final = frozenset(
    {"batch_size", "batch_sizes", "device", "use_cache", "bootstrap_iters", "limit", "model_num_parameters"}
)
#: ``configs.<task>`` keys that change what a document's grade measures.
_TASK_SETTINGS: Final = (
    "dataset_path",
    "dataset_name",
    "dataset_kwargs",
    "num_fewshot",
    "fewshot_config",
    "generation_kwargs",
    "filter_list",
    "metric_list",
)
#: The longest setting value shown whole in a candidate name (longer ones are cut and given a hash).
_SHOWN: Final = 40


#: The memory address lm-eval writes in the repr of a task's Python function (``<function f at 0x7d5f…>``):
#: it changes with every process, never with the function, so it is not part of a setting.
_ADDRESS: Final = re.compile(r" at 0x[0-9a-fA-F]+>")


def _text(value: object) -> str:
    """A setting as one text: strings bare, others compact sorted JSON; a long one cut, with a hash of the whole.

    Examples
    --------
    >>> _text({"doc_to_text": "<function doc_to_text at 0x7d5febf3e8e0>"})
    '{"doc_to_text":"<function doc_to_text>"}'
    """
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    text = _ADDRESS.sub(">", text)
    if len(text) <= _SHOWN:
        return text
    return f"{text[: _SHOWN - 12]}…#{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _model_args(config: Mapping[str, Any]) -> dict[str, object]:
    """``config.model_args`` as a mapping (lm-eval writes a dict or a ``k=v,k=v`` string)."""
    args: object = config.get("model_args")
    if isinstance(args, dict):
        return {str(k): v for k, v in args.items()}
    parsed: dict[str, object] = {}
    if isinstance(args, str):
        for part in args.split(","):
            arg, sep, text = part.partition("=")
            if sep:
                parsed.setdefault(arg.strip(), text.strip())
    return parsed


def _settings(data: Mapping[str, Any] | None, task: str) -> dict[str, str]:
    """The settings a results file records for one task's run, as ``{key: value text}``.

    Keys: ``model_args.<k>`` (parsed), the other ``config`` keys that say what was run (``gen_kwargs``,
    ``model_revision``, ``model_sha``, ``model_dtype``, the seeds…, not batching, device or ``limit``),
    ``num_fewshot`` (``n-shot``), ``task_version`` (``versions``), ``task.<k>`` for the task config's
    dataset, few-shot, generation, filter and metric keys, and ``system_instruction_sha``,
    ``chat_template_sha``, ``fewshot_as_multiturn``. A key the file does not record is absent.

    Examples
    --------
    >>> _settings({"config": {"model_args": "pretrained=m,dtype=float16", "limit": 10.0, "device": "cuda"},
    ...            "n-shot": {"gsm8k": 5}}, "gsm8k")
    {'model_args.pretrained': 'm', 'model_args.dtype': 'float16', 'num_fewshot': '5'}
    """
    if data is None:
        return {}
    config = json_object(data.get("config"))
    found: dict[str, str] = {f"model_args.{k}": _text(v) for k, v in _model_args(config).items()}
    for key, value in config.items():
        if key != "model_args" and key not in _NOT_SETTINGS and value is not None:
            found[str(key)] = _text(value)
    for key, where in (("num_fewshot", "n-shot"), ("task_version", "versions")):
        value = _dig(data, where, task)
        if value is not None:
            found[key] = _text(value)
    task_config = json_object(_dig(data, "configs", task))
    for key in _TASK_SETTINGS:
        if task_config.get(key) is not None:
            found[f"task.{key}"] = _text(task_config[key])
    for key in ("system_instruction_sha", "chat_template_sha", "fewshot_as_multiturn"):
        if data.get(key) is not None:
            found[key] = _text(data[key])
    return found


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

"""JSON Lines: one JSON object per line, and the one JSON parser of evalframe (loaders and importers)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any, Final

import polars as pl

from evalframe.columns import LINE, SOURCE
from evalframe.errors import InputFormatError
from evalframe.load.limit import current_limits, limit_detail
from evalframe.load.loaded import RESERVED, Loaded, PathLike, reserved_problem
from evalframe.load.text import read_text
from evalframe.problems import problems_frame

#: The range of a JSON integer evalframe reads: polars' Int64 (a larger one is refused, never wrapped or rounded).
INT64_RANGE: Final = (-(2**63), 2**63 - 1)


class JSONLimitError(ValueError):
    """A JSON text that is well formed but beyond what is read: nested too deeply, a number Python cannot convert.

    Attributes
    ----------
    detail
        What is wrong, for a person.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


class NumberToken(float):
    """A JSON number that is not an integer, with the token it was written as (``text``).

    A float rounds: ``0.99999999999999999999`` is the float 1.0. The JSON
    Lines loader keeps the token so that a column holding one is read as
    text, checked as a CSV cell is (a binary grade is exactly ``0`` or ``1``).
    """

    text: str

    def __new__(cls, text: str) -> NumberToken:
        """The float of ``text`` (``NaN``, ``Infinity`` and ``-Infinity`` included), remembering ``text``."""
        number = super().__new__(cls, text)
        number.text = text
        return number


def parse_json_text(text: str, *, repeated: list[str] | None = None, tokens: bool = False) -> Any:
    """Parse one JSON text: the one place evalframe turns JSON text into values (loaders and importers).

    ``NaN``, ``Infinity`` and ``-Infinity`` are read as floats. With
    ``repeated`` (a list), it is set to the keys that the outermost object
    holds more than once (Python keeps the last value silently; the object
    is parsed last, after the values nested in it). With ``tokens``, every
    number that is not an integer (and ``NaN``, ``Infinity``) is a
    :class:`NumberToken`, a float that keeps the text it was written as.

    Raises
    ------
    json.JSONDecodeError
        When the text is not JSON.
    JSONLimitError
        When it is nested deeper than ``Limits.json_depth`` or too deeply for
        the parser (a ``RecursionError``), or holds a number literal Python
        does not convert (over 4300 digits).

    Examples
    --------
    >>> repeated = []
    >>> parse_json_text('{"a": 1, "a": 2, "b": NaN}', repeated=repeated), repeated
    ({'a': 2, 'b': nan}, ['a'])
    >>> parse_json_text("[0.99999999999999999999]", tokens=True)[0].text
    '0.99999999999999999999'
    >>> try:
    ...     parse_json_text("[" * 100_000)
    ... except JSONLimitError as exc:
    ...     print(exc.detail)
    JSON nested too deeply to read (limit 512; raise it with --max-json-depth)
    """
    hook = None
    if repeated is not None:

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(pairs)
            repeated[:] = [k for k, n in Counter(k for k, _ in pairs).items() if n > 1] if len(obj) < len(pairs) else []
            return obj

    depth = current_limits().json_depth
    if text.count("[") + text.count("{") > depth and json_depth(text) > depth:
        raise JSONLimitError(limit_detail("json_depth", "JSON nested too deeply to read"))
    try:
        if tokens:
            return json.loads(text, object_pairs_hook=hook, parse_float=NumberToken, parse_constant=NumberToken)
        return json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JSONLimitError("JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts
        raise JSONLimitError(f"unreadable JSON value ({exc})") from None


#: A JSON string, or an unterminated one running to the end of the text (what a crashed writer leaves). The
#: possessive quantifiers and the end-of-text close keep one linear pass: a string that never closes is matched
#: once, not retried from each quote inside it (a cut-off run of escaped quotes took quadratic time).
_JSON_STRING: Final = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)')
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not count).

    Examples
    --------
    >>> json_depth('{"a": [1, [2]], "b": "[[[["}'), json_depth("3")
    (3, 0)
    """
    import numpy as np  # imported on use: `import evalframe` does not need it

    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    if not steps.size:
        return 0
    return int(np.cumsum(np.where((steps == ord("[")) | (steps == ord("{")), 1, -1)).max(initial=0))


def _json_column(values: list[Any]) -> pl.Series:
    """One column of JSON values: Boolean when all are booleans, Int64 when all are integers, else text.

    Text holds each string as it is and every other value as its JSON token (a number as written: see
    :class:`NumberToken`), so a number that is not an integer is checked as its token, as a CSV cell is.
    """
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pl.Series(values, dtype=pl.Boolean)
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pl.Series(values, dtype=pl.Int64)
    return pl.Series([None if v is None else _token(v) for v in values], dtype=pl.String)


def _token(value: Any) -> str:
    """A JSON value as text: a string as it is, a number as written, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, NumberToken):
        return value.text
    return json.dumps(value)


def _out_of_range(value: Any) -> bool:
    """Whether ``value`` is an integer outside :data:`INT64_RANGE`."""
    low, high = INT64_RANGE
    return isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high


def read_jsonl(path: PathLike) -> Loaded:
    """Read a JSON Lines file (one JSON object per line), reporting bad lines.

    A column whose values are all booleans becomes Boolean, all integers
    Int64; any other becomes String, each string as it is and any other
    value as its JSON token: a number that is not an integer as it was
    written (``0.99999999999999999999``, ``1.0``, ``NaN``), never rounded
    to a float, so that validation checks it as it checks a CSV cell (a
    binary grade is exactly ``0`` or ``1``; a score is parsed then).

    Parameters
    ----------
    path
        The JSON Lines file.

    Returns
    -------
    Loaded
        One row per object plus ``line`` (Int64) and ``source``. Lines that
        are not a JSON object are reported as ``unreadable_file`` problems;
        a key repeated in an object as ``repeated_column``; a key named like
        a column the loader adds (``line``, ``source``) as
        ``unexpected_column``; blank lines are skipped.

    Raises
    ------
    InputFormatError
        When the file cannot be opened or a line is nested too deeply to parse
        (naming the line). An integer outside :data:`INT64_RANGE` is kept as its digits (String), so that
        validation reports it as it does a CSV cell.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"candidate": "A", "case_id": "quote", "passed": 1}\\n{oops\\n')
    >>> loaded = read_jsonl(p)
    >>> loaded.frame.drop("source").collect().to_dicts()
    [{'candidate': 'A', 'case_id': 'quote', 'passed': 1, 'line': 1}]
    >>> loaded.problems.select("kind", "line").to_dicts()
    [{'kind': 'unreadable_file', 'line': 2}]
    """
    source = str(path)
    text, problems = read_text(path)
    batches: list[pl.DataFrame] = []
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    reserved_seen: set[str] = set()
    for number, text_line in enumerate(_lines(text), start=1):
        if not text_line.strip():
            continue
        obj = _object(text_line, number, source, problems)
        if obj is None:
            continue
        for name in RESERVED:
            if name in obj:
                if name not in reserved_seen:  # one problem per file, at the first line that has it
                    reserved_seen.add(name)
                    problems.append(reserved_problem(name, source, number))
                del obj[name]
        rows.append(obj)
        lines.append(number)
        if len(rows) == BATCH_OBJECTS:
            batches.append(_frame(rows, lines))
            rows, lines = [], []
    del text
    if rows or not batches:
        batches.append(_frame(rows, lines))
    frame = _joined(batches).with_columns(pl.lit(source, pl.String).alias(SOURCE))
    return Loaded(frame.lazy(), problems_frame(problems), source)


#: Objects turned into polars columns at a time: the Python objects of one batch are all that is held beside the
#: file's text and the columns read so far, whatever the number of lines.
BATCH_OBJECTS: Final = 65_536


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` (split at LF) one at a time, as ``text.split("\\n")`` lists them."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _object(text_line: str, number: int, source: str, problems: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The JSON object of one line, or None when the line is not one (reported in ``problems``).

    A repeated key is reported and the object kept; an integer outside :data:`INT64_RANGE` becomes its
    digits (text); JSON beyond the limits is an input error naming the line.
    """
    repeated: list[str] = []
    try:
        obj = parse_json_text(text_line, repeated=repeated, tokens=True)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON ({exc.msg}, column {exc.colno})"
        problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
        return None
    except JSONLimitError as exc:
        raise InputFormatError(source, exc.detail, line=number) from None
    if not isinstance(obj, dict):
        msg = f"expected a JSON object, found {type(obj).__name__}"
        problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
        return None
    if _SURROGATE_ESCAPE.search(text_line) and _lone_surrogate(obj):
        msg = "a \\u escape names half of a UTF-16 surrogate pair, which is no character (not text)"
        problems.append({"kind": "unreadable_file", "source": source, "line": number, "detail": msg})
        return None
    for name in repeated:
        msg = f"key {name!r} is repeated in the object (a JSON object names each column once)"
        problems.append({"kind": "repeated_column", "source": source, "line": number, "detail": msg})
    # An integer no Int64 can hold is kept as its digits, as a CSV cell is: validation names it and the line.
    return {k: str(v) if _out_of_range(v) else v for k, v in obj.items()}


#: A ``\uD800``-``\uDFFF`` escape: JSON writes characters beyond U+FFFF as two of them; one alone is no character.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value holds a string (or key) with a lone surrogate, which no UTF-8 encodes."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


def _frame(rows: list[dict[str, Any]], lines: list[int]) -> pl.DataFrame:
    """A batch of objects as one frame: columns in order of first appearance (:func:`_json_column`), ``line``.

    A column with no value in the batch is of dtype Null (:func:`_joined` gives it the file's type).
    """
    names: list[str] = []
    for row in rows:
        names.extend(k for k in row if k not in names)
    series = {}
    for k in names:
        values = [row.get(k) for row in rows]
        series[k] = _json_column(values).alias(k) if any(v is not None for v in values) else pl.Series(k, values)
    return pl.DataFrame({**series, LINE: pl.Series(lines, dtype=pl.Int64)})


def _joined(batches: list[pl.DataFrame]) -> pl.DataFrame:
    """The batches as one frame, each column of the type :func:`_json_column` gives all of the file's values.

    A column Boolean (or Int64) in every batch that has a value stays so; one of two types, or String in some
    batch, is String in all, each boolean or integer written as its JSON token (``true``, ``12``).
    """
    names: list[str] = []
    types: dict[str, set[pl.DataType]] = {}
    for batch in batches:
        for name, dtype in batch.schema.items():
            if name != LINE:
                names.extend([name] if name not in types else [])
                types.setdefault(name, set()).update([dtype] if dtype != pl.Null else [])
    final = {n: next(iter(types[n])) if len(types[n]) == 1 else pl.String for n in names}
    cast = [
        [pl.col(n).cast(t) if n in b.schema else pl.lit(None, t).alias(n) for n, t in final.items()] for b in batches
    ]
    return pl.concat([b.select(*columns, LINE) for b, columns in zip(batches, cast, strict=True)])

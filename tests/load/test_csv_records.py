"""``csv_records``: the csv module's records, lines and errors, for fields of any length, its limit untouched."""

from __future__ import annotations

import csv
import random
import sys

import pytest

from evalframe.load import MalformedRecord, csv_records
from evalframe.load.csv_strict import _physical_lines

#: Pieces of hostile CSV text: quotes, delimiters, both line breaks, a lone CR, and a field over the csv
#: module's default limit (131,072 characters) once two of them meet.
PIECES = ["a", ",", '"', "\n", "\r\n", "\r", "b", "X" * 70_000]


def reference(lines: list[str]) -> tuple[list[tuple[int, int, list[str]]], tuple[str, int] | None]:
    """What ``csv.reader(lines, strict=True)`` reads with no field limit: (start, end, fields), the first error."""
    saved = csv.field_size_limit(sys.maxsize)
    records: list[tuple[int, int, list[str]]] = []
    reader = csv.reader(lines, strict=True)
    try:
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return records, None
            except csv.Error as exc:
                return records, (str(exc), start)
            records.append((start, reader.line_num, fields))
    finally:
        csv.field_size_limit(saved)


def read(lines: list[str]) -> tuple[list[tuple[int, int, list[str]]], tuple[str, int] | None]:
    """What :func:`csv_records` reads, in the same shape."""
    records: list[tuple[int, int, list[str]]] = []
    try:
        records.extend((r.start, r.end, r.fields) for r in csv_records(lines))
    except MalformedRecord as exc:
        return records, (str(exc), exc.start)
    return records, None


def test_random_hostile_texts_read_as_the_csv_module_reads_them_without_a_limit() -> None:
    rng = random.Random(20)
    over_limit = 0
    for _ in range(3_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        lines = list(_physical_lines(text))
        assert read(lines) == reference(lines), repr(text[:60])
        over_limit += max(map(len, text.split(","))) > 131_072
    assert over_limit > 300  # the second parse was exercised, not only the csv module's
    assert csv.field_size_limit() == 131_072


def test_a_long_quoted_field_over_three_lines_keeps_its_lines_and_the_next_record_its_own() -> None:
    long = "y" * 150_000
    lines = ["id,answer\n", f'q1,"{long}\n', "second\n", 'third"\n', "q2,short\n"]
    assert [(r.start, r.end, r.fields) for r in csv_records(lines)] == [
        (1, 1, ["id", "answer"]),
        (2, 4, ["q1", f"{long}\nsecond\nthird"]),
        (5, 5, ["q2", "short"]),
    ]


@pytest.mark.parametrize(
    ("tail", "message"),
    [('"x', "unexpected end of data"), ('"x"y\n', "',' expected after '\"'")],
)
def test_malformed_quoting_after_a_long_field_names_the_record_start(tail: str, message: str) -> None:
    lines = ["id,answer\n", "q1,ok\n", "z" * 140_000 + "," + tail]
    with pytest.raises(MalformedRecord) as caught:
        list(csv_records(lines))
    assert (str(caught.value), caught.value.start, caught.value.end) == (message, 3, 3)

"""Read plans and ledgers from files into raw polars frames, with their problems.

Loading is the only step that touches files. It never modifies its input and
never stops at the first problem: every structural problem of a CSV (header,
field counts, blank lines, quoting, bytes) is collected with its line number,
and the records that could be read are returned beside them so later checks
can still report on them.

Every returned frame carries two extra columns: ``line`` (Int64; CSV and JSON
Lines physical line, the CSV header being line 1; Parquet 1-based row number
within its file) and ``source`` (String; the file the row came from).

Every name other modules use is re-exported here; ``evalframe.load`` names the function :func:`load`.
"""

from evalframe.load.csv_records import CsvRecord, MalformedRecord, csv_records
from evalframe.load.csv_strict import read_csv_strict
from evalframe.load.dispatch import is_spark_frame, load
from evalframe.load.files import collect_input, glob_files, is_glob
from evalframe.load.jsonl import INT64_RANGE, JSONLimitError, json_depth, parse_json_text, read_jsonl
from evalframe.load.limit import (
    LIMIT_FLAGS,
    MAX_PLANNED_UNITS,
    Limits,
    check_line_lengths,
    check_planned_units,
    current_limits,
    limit_detail,
    limits,
)
from evalframe.load.loaded import RESERVED, Loaded, PathLike
from evalframe.load.parquet import naming_the_damaged_file, scan_parquet
from evalframe.load.remote import current_storage_options, fetched, is_url, storage_options

__all__ = [
    "INT64_RANGE",
    "LIMIT_FLAGS",
    "MAX_PLANNED_UNITS",
    "RESERVED",
    "JSONLimitError",
    "Limits",
    "Loaded",
    "PathLike",
    "check_line_lengths",
    "check_planned_units",
    "CsvRecord",
    "MalformedRecord",
    "csv_records",
    "current_storage_options",
    "collect_input",
    "current_limits",
    "glob_files",
    "is_glob",
    "is_spark_frame",
    "fetched",
    "is_url",
    "json_depth",
    "limit_detail",
    "limits",
    "load",
    "naming_the_damaged_file",
    "parse_json_text",
    "read_csv_strict",
    "read_jsonl",
    "scan_parquet",
    "storage_options",
]

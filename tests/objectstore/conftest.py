"""An S3 server on 127.0.0.1 for the object-storage tests: moto's server mode, in this process, on a free port.

The fixture starts it once per module, makes the bucket ``evals``, and stops it after. Objects are put with
plain HTTP PUTs (moto checks no signature unless told to); every request the server answers is logged in
``S3Server.requests`` (method, key) by a WSGI wrapper, so a test can count the GETs of a scan.
"""

from __future__ import annotations

import logging
import re
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("moto.server", reason="pip install 'evalframe[test]' (moto[server])")
pytest.importorskip("obstore", reason="pip install 'evalframe[lakes]'")

BUCKET = "evals"
#: Credentials of the test server (moto accepts any unless auth is enforced; none is a real secret).
KEY_ID, SECRET = "evalframe-test-key", "evalframe-test-secret-0123456789"


@dataclass
class S3Server:
    """A running moto server: its endpoint, the store options that read it, the requests it answered."""

    endpoint: str
    requests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def options(self) -> dict[str, str]:
        """polars-style storage options reaching this server."""
        return {
            "aws_access_key_id": KEY_ID,
            "aws_secret_access_key": SECRET,
            "aws_endpoint_url": self.endpoint,
            "aws_region": "us-east-1",
            "aws_allow_http": "true",
        }

    def put(self, key: str, data: bytes, *, public: bool = False) -> str:
        """Put one object into the bucket (``public``: readable without credentials, over plain HTTP); its URL."""
        headers = {"Content-Type": "application/octet-stream", **({"x-amz-acl": "public-read"} if public else {})}
        req = urllib.request.Request(f"{self.endpoint}/{BUCKET}/{key}", data=data, method="PUT", headers=headers)
        with urllib.request.urlopen(req, timeout=10) as response:  # noqa: S310  (loopback test server)
            assert response.status == 200
        return f"s3://{BUCKET}/{key}"

    def put_tree(self, folder: Path, prefix: str) -> str:
        """Put every file under ``folder`` at ``prefix/<relative path>``; the prefix's ``s3://`` URL."""
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            self.put(f"{prefix}/{path.relative_to(folder).as_posix()}", path.read_bytes())
        return f"s3://{BUCKET}/{prefix}"

    def gets(self, under: str = "") -> list[str]:
        """The keys the server answered a GET for (ranged or whole), below ``under``."""
        return [k for m, k in self.requests if m == "GET" and k.startswith(under)]


def store_args(server: S3Server, **changed: str) -> list[str]:
    """The ``--storage-option KEY=VALUE`` flags that reach ``server`` (``changed``: options replaced)."""
    return [f"--storage-option={k}={v}" for k, v in {**server.options, **changed}.items()]


def _logging(app: Callable[..., Any], log: list[tuple[str, str]]) -> Callable[..., Any]:
    """A WSGI app that logs (method, object key) of each request, then hands it to ``app``."""

    def logged(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = unquote(environ.get("PATH_INFO", ""))
        key = path.removeprefix(f"/{BUCKET}").lstrip("/")
        log.append((environ.get("REQUEST_METHOD", ""), key))
        return app(environ, start_response)

    return logged


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    """A moto S3 server on 127.0.0.1 (a free port) holding the empty bucket ``evals``."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        assert host == "127.0.0.1"
        found = S3Server(f"http://{host}:{port}")
        inner = server._server  # the werkzeug server: its app is wrapped to log requests
        assert inner is not None
        inner.app = _logging(inner.app, found.requests)
        req = urllib.request.Request(f"{found.endpoint}/{BUCKET}", method="PUT")
        with urllib.request.urlopen(req, timeout=10) as response:  # noqa: S310  (loopback test server)
            assert response.status == 200
        yield found
    finally:
        server.stop()


def closed_port() -> str:
    """An endpoint on 127.0.0.1 where nothing listens (a port bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def key_of(url: str) -> str:
    """The object key of an ``s3://evals/...`` URL."""
    return urlsplit(url).path.lstrip("/")


#: Files of an output folder that record when and how it was written (its manifest), not the audit.
WRITING_RECORD = ("evalframe-manifest.json",)


def assert_same_outputs(local: Path, remote: Path, names: dict[str, str]) -> None:
    """Two ``--out`` folders hold the same audit: every table equal and every report byte-equal, once each
    input's URL is written as its local path (``names``: URL prefix → local prefix; provenance names them)."""
    import polars as pl
    from polars.testing import assert_frame_equal

    def local_names(text: str) -> str:
        for url, path in names.items():  # Markdown writes "s3\://" (no autolink)
            text = text.replace(url, path).replace(url.replace("://", "\\://"), path)
        return text

    files = sorted(p.name for p in local.iterdir())
    assert files == sorted(p.name for p in remote.iterdir())
    for name in files:
        if name in WRITING_RECORD:
            continue
        if name.endswith(".parquet"):
            want = pl.read_parquet(local / name)
            got = pl.read_parquet(remote / name)
            text = [c for c, t in got.schema.items() if t in (pl.String, pl.Categorical)]
            got = got.with_columns(
                pl.col(c).cast(pl.String).map_elements(local_names, return_dtype=pl.String).cast(got.schema[c])
                for c in text
            )
            assert_frame_equal(got, want, check_exact=True)
        else:
            got_text = local_names((remote / name).read_text(encoding="utf-8"))
            assert got_text == (local / name).read_text(encoding="utf-8"), name


@contextmanager
def enforced_auth(server: S3Server) -> Iterator[None]:
    """Inside the block the server checks credentials (moto's ``reset-auth``): an unknown key is denied (403).

    moto holds the setting for its whole process; the block restores "never check" on leaving.
    """

    def reset(count: str) -> None:
        req = urllib.request.Request(
            f"{server.endpoint}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(req, timeout=10) as response:  # noqa: S310  (loopback test server)
            assert response.status == 200

    reset("0")
    try:
        yield
    finally:
        reset("inf")


def orbit_versions() -> tuple[Any, Any]:
    """Orbit Desk's ledger (SPEC §7, text columns) and a later version of it where B's handoff passed (0 → 1)."""
    import polars as pl

    from tests.conftest import FIXTURES

    first = pl.read_csv(FIXTURES / "orbit_desk" / "results.csv", infer_schema=False)
    handoff = (pl.col("candidate") == "B") & (pl.col("case_id") == "handoff")
    return first, first.with_columns(pl.when(handoff).then(pl.lit("1")).otherwise("passed").alias("passed"))


def passed_of_b(report: Any) -> int:
    """Candidate B's passed count in a report's summary (Orbit Desk: 3 of 4; 4 once handoff passed)."""
    import polars as pl

    return int(report.summary.filter(pl.col("candidate") == "B").get_column("passed").item())


#: The progress line a loaded machine may print after 10 s ("evalframe: 0:00:11 elapsed; reading the inputs").
PROGRESS = re.compile(r"evalframe: \d+:\d\d:\d\d elapsed")


def one_error_line(code: int, out: str, err: str, name: str) -> str:
    """The one line of an exit-2 input error naming ``name``: no traceback, no secret; the line itself."""
    assert code == 2, (out, err)
    lines = [line for line in err.strip().splitlines() if not PROGRESS.match(line)]
    assert len(lines) == 1, err
    assert name in lines[0] and "Traceback" not in err
    assert SECRET not in out + err
    return lines[0]

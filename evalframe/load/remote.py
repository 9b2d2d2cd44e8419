"""Object storage: inputs named by URL (``s3://``, ``gs://``, ``az://``, ``https://``), their options and listing.

A URL is read where a local path is: polars scans its Parquet files itself (``storage_options``, ranged GETs:
footers, then only the row groups and columns a query needs); a folder or glob URL is listed here first (one
LIST of the prefix before its first wildcard), so that the loaders see a list of files as they do for a
local folder. CSV and JSON Lines are fetched whole: the strict readers parse every byte.

Credentials come from where polars (object_store) and obstore look by themselves — the ``AWS_*`` variables
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``,
``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``), ``GOOGLE_*`` and ``AZURE_*`` ones, instance metadata — plus the
options held by :func:`storage_options` (the command line's ``--storage-option KEY=VALUE``). No option value
is ever part of an error: :func:`scrubbed` blanks them in every reader message quoted.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from typing import Any, Final
from urllib.parse import urlsplit

from evalframe.errors import InputFormatError, MissingExtra

#: The URL schemes read from object storage (those of polars' and obstore's stores).
SCHEMES: Final = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "azure", "http", "https")
#: Options of the HTTP client (obstore takes them apart from the store's); polars takes both in one mapping.
_CLIENT_KEYS: Final = frozenset(
    {"allow_http", "aws_allow_http", "timeout", "connect_timeout", "allow_invalid_certificates"}
)
#: Retries and timeouts unless the options say otherwise: an endpoint that does not answer fails in seconds.
_RETRIES: Final = {"max_retries": 1, "retry_timeout": timedelta(seconds=5)}
_TIMEOUTS: Final = {"connect_timeout": "3s", "timeout": "60s"}
#: Environment variables whose values are secrets (blanked in messages like the options' values).
_SECRET_VARIABLES: Final = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AWS_ACCESS_KEY_ID",
)

#: Option keys whose values are credentials (an endpoint or a region is not: it stays readable in errors).
_SECRET_KEY: Final = re.compile(r"secret|token|password|sas|credential|key|signature", re.IGNORECASE)

_OPTIONS: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("evalframe_storage_options", default=())


def is_url(path: object) -> bool:
    """Whether ``path`` names an object in a store (``s3://bucket/key``), not a local file.

    Examples
    --------
    >>> is_url("s3://evals/run=1/"), is_url("gs://b/x.csv"), is_url("data/plan.csv"), is_url("C:/x.csv")
    (True, True, False, False)
    """
    if not isinstance(path, str):
        return False
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def check_url(url: str) -> None:
    """Refuse a URL that carries credentials (``user:password@`` or a query such as a signature).

    Credentials go in the environment or the storage options, so that the URL can be printed and recorded.

    Also refused, with the URL named: no bucket or host (``s3:///x.csv``), and a key with an empty, ``.`` or
    ``..`` segment (``s3://b/a//x.csv``, ``s3://b/../x``), which the stores' clients cannot address.

    Raises
    ------
    InputFormatError
        Naming the URL without its credentials.

    Examples
    --------
    >>> check_url("s3://evals/run=1/")
    >>> check_url("s3:///x.csv")
    Traceback (most recent call last):
    ...
    evalframe.errors.InputFormatError: s3:///x.csv: no bucket or host after s3:// (write s3://BUCKET/KEY)
    """
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query:
        public = f"{parts.scheme}://{parts.hostname or ''}{parts.path}"
        detail = "a URL holding credentials or a query is refused: give them as --storage-option KEY=VALUE"
        raise InputFormatError(public, detail)
    if not parts.netloc:
        where = "HOST/PATH" if parts.scheme.lower() in ("http", "https") else "BUCKET/KEY"
        raise InputFormatError(url, f"no bucket or host after {parts.scheme}:// (write {parts.scheme}://{where})")
    segments = parts.path.strip("/").split("/")
    if parts.path.strip("/") and any(s in ("", ".", "..") for s in segments):
        detail = "an object key with an empty, '.' or '..' segment is refused: name the object's key as stored"
        raise InputFormatError(url, detail)


@contextmanager
def storage_options(options: Mapping[str, str] | None) -> Iterator[None]:
    """Read every URL inside the block with these store options (keys as polars' ``storage_options``).

    None or empty adds nothing: the environment's credentials are read as they are. Nested blocks see
    the innermost options merged over the outer ones.

    Examples
    --------
    >>> with storage_options({"aws_region": "eu-west-1"}):
    ...     current_storage_options()
    {'aws_region': 'eu-west-1'}
    >>> current_storage_options()
    {}
    """
    token = _OPTIONS.set(tuple({**dict(_OPTIONS.get()), **(options or {})}.items()))
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def current_storage_options() -> dict[str, str]:
    """The options :func:`storage_options` holds now (a copy)."""
    return dict(_OPTIONS.get())


def scan_options(path: object) -> dict[str, Any]:
    """The keyword arguments polars' readers take for ``path``: its storage options when it is a URL, else none."""
    if not is_url(path):
        return {}
    given = current_storage_options()
    options: dict[str, Any] = {**given}
    options.setdefault("max_retries", _RETRIES["max_retries"])
    options.setdefault("connect_timeout", _TIMEOUTS["connect_timeout"])
    return {"storage_options": options}


def scrubbed(text: str) -> str:
    """``text`` with every credential blanked (``***``).

    The credentials are the values of storage options named like one (keys, secrets, tokens) and of the
    secret environment variables.

    Examples
    --------
    >>> with storage_options({"aws_secret_access_key": "s3cr3t-value", "aws_region": "eu-west-1"}):
    ...     scrubbed("signature of s3cr3t-value failed in eu-west-1")
    'signature of *** failed in eu-west-1'
    """
    given = current_storage_options()
    secrets = [v for k, v in given.items() if _SECRET_KEY.search(k)]
    secrets += [os.environ.get(v, "") for v in _SECRET_VARIABLES]
    for value in sorted({s for s in secrets if len(str(s)) >= 4}, key=len, reverse=True):
        text = text.replace(str(value), "***")
    return text


def _store(url: str) -> Any:
    """An obstore store of the URL's bucket (or host), configured as polars is for the same URL."""
    try:
        from obstore.store import from_url
    except ModuleNotFoundError as exc:
        raise MissingExtra.of("lakes", exc) from None

    parts = urlsplit(url)
    given = {k.lower(): v for k, v in current_storage_options().items() if k.lower() not in ("max_retries",)}
    client = {**_TIMEOUTS, **{k.removeprefix("aws_"): v for k, v in given.items() if k in _CLIENT_KEYS}}
    if parts.scheme == "http":  # named by the user: plain HTTP is what the URL asks for
        client.setdefault("allow_http", "true")
    if os.environ.get("AWS_ALLOW_HTTP"):  # obstore's client options, once given, no longer read the variable
        client.setdefault("allow_http", os.environ["AWS_ALLOW_HTTP"])
    config = {k: v for k, v in given.items() if k not in _CLIENT_KEYS}
    retries: dict[str, Any] = dict(_RETRIES)
    root = f"{parts.scheme}://{parts.netloc}" if parts.scheme not in ("http", "https") else url.rsplit("/", 1)[0]
    build: Any = from_url  # typed per store; the options are the user's, checked by the store
    try:
        if "max_retries" in current_storage_options():
            retries["max_retries"] = int(current_storage_options()["max_retries"])
        return build(root, config=config or None, client_options=client, retry_config=retries)
    except Exception as exc:  # an unknown key or a value the store cannot parse: the user's options
        first = (str(exc).strip().splitlines() or [""])[0]
        detail = f"a --storage-option is not valid for this store ({type(exc).__name__}: {first})"
        raise InputFormatError(url, scrubbed(detail)) from None


def _key(url: str) -> str:
    """The object key of a URL within its bucket (for ``https``: the last segment)."""
    parts = urlsplit(url)
    return parts.path.rsplit("/", 1)[-1] if parts.scheme in ("http", "https") else parts.path.lstrip("/")


def store_error(url: str, exc: BaseException) -> InputFormatError:
    """The one-line input error of a store that could not be read: missing, denied or unreachable."""
    name = type(exc).__name__
    if isinstance(exc, FileNotFoundError) or name == "NotFoundError":
        reason = "no such object in the store"
    elif isinstance(exc, PermissionError) or name in ("PermissionDeniedError", "UnauthenticatedError"):
        reason = "access denied by the store: check the credentials (AWS_* variables, --storage-option)"
    else:
        first = (str(exc).strip().splitlines() or [""])[0]
        reason = f"cannot reach the store ({name}: {first})"
    return InputFormatError(url, scrubbed(reason))


def _glob_pattern(key: str) -> re.Pattern[str]:
    """A glob over object keys as the shell reads it: ``*`` and ``?`` within a folder, ``**/`` any folders.

    Examples
    --------
    >>> [bool(_glob_pattern("lake/**/*.parquet").fullmatch(k)) for k in ("lake/a.parquet", "lake/x=1/a.parquet")]
    [True, True]
    >>> bool(_glob_pattern("lake/*.parquet").fullmatch("lake/x=1/a.parquet"))
    False
    """
    out, i = "", 0
    while i < len(key):
        if key.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif key.startswith("**", i):
            out, i = out + ".*", i + 2
        elif key[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif key[i] == "?":
            out, i = out + "[^/]", i + 1
        elif key[i] == "[" and "]" in key[i + 2 :]:
            end = key.index("]", i + 2)
            body = key[i + 1 : end]
            out, i = out + "[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        else:
            out, i = out + re.escape(key[i]), i + 1
    return re.compile(out)


def list_url(url: str) -> list[str]:
    """The objects a URL names: itself (a file), a folder's objects (recursively), or a glob's matches; sorted.

    A name whose file name starts with ``.`` or ``_`` (``_SUCCESS``, ``_delta_log``'s files) is left out of a
    folder, as locally. One HEAD of the URL's key (an object: itself), then one LIST of the folder's prefix
    (or of the prefix before a glob's first wildcard).

    Raises
    ------
    InputFormatError
        When the object is missing, the store denies the request or cannot be reached (one line, naming
        the URL; no option value).
    """
    check_url(url)
    store = _store(url)  # first: without the lakes extra, a MissingExtra
    import obstore
    import obstore.exceptions

    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}/"
    key = _key(url)
    wild = glob.has_magic(key)
    try:
        if not wild and key and not url.endswith("/"):  # no key: the bucket's root, a folder
            try:
                obstore.head(store, key)
                return [url]
            except (FileNotFoundError, obstore.exceptions.NotFoundError):
                pass  # no object of that name: a folder's prefix, or nothing (said below)
        prefix = key[: min((key.index(c) for c in "*?[" if c in key), default=len(key))]
        prefix = prefix.rsplit("/", 1)[0] + "/" if wild else key.rstrip("/") + "/"
        found = [meta["path"] for batch in obstore.list(store, prefix=prefix.lstrip("/") or None) for meta in batch]
    except Exception as exc:
        raise store_error(url, exc) from None
    if wild:
        pattern = _glob_pattern(key)
        keys = [k for k in found if pattern.fullmatch(k) and not k.rsplit("/", 1)[-1].startswith(".")]
    else:
        keys = [k for k in found if not k.rsplit("/", 1)[-1].startswith((".", "_"))]
    if not found:
        raise InputFormatError(url, "no such object or folder in the store")
    return sorted(base + k for k in keys)


def read_bytes(url: str) -> bytes:
    """The whole object at ``url`` (CSV and JSON Lines are parsed whole).

    Raises
    ------
    InputFormatError
        As :func:`list_url`.
    """
    check_url(url)
    store = _store(url)
    import obstore

    try:
        return bytes(obstore.get(store, _key(url)).bytes())
    except Exception as exc:
        raise store_error(url, exc) from None


def _placed(url: str, listed: list[str]) -> tuple[str, list[tuple[str, str]]]:
    """Where a URL's objects go below a private folder: the URL's own place there and (object, relative path).

    A file keeps its name; a folder its last segment and its objects' paths below it; a glob its matches'
    paths below the folder before its first wildcard (as the shell's expansion names them).

    Examples
    --------
    >>> _placed("s3://b/logs/", ["s3://b/logs/a.eval", "s3://b/logs/x/b.eval"])
    ('logs', [('s3://b/logs/a.eval', 'logs/a.eval'), ('s3://b/logs/x/b.eval', 'logs/x/b.eval')])
    >>> _placed("s3://b/logs/a.eval", ["s3://b/logs/a.eval"])
    ('a.eval', [('s3://b/logs/a.eval', 'a.eval')])
    """
    if glob.has_magic(_key(url)):
        root = url[: min(url.index(c) for c in "*?[" if c in url)].rsplit("/", 1)[0]
        return "", [(u, u.removeprefix(root + "/")) for u in listed]
    if listed == [url]:
        return url.rsplit("/", 1)[-1], [(url, url.rsplit("/", 1)[-1])]
    root = url.rstrip("/")
    name = root.rsplit("/", 1)[-1]
    return name, [(u, f"{name}/{u.removeprefix(root + '/')}") for u in listed]


@contextmanager
def fetched(
    paths: Sequence[str | os.PathLike[str]], *, beside: bool = False
) -> Iterator[tuple[list[str | os.PathLike[str]], dict[str, str]]]:
    """The given paths with every URL's objects fetched whole into a private folder, removed on leaving.

    For readers that parse a file whole (JSON, zip archives: the importers' exports): each URL is listed
    (:func:`list_url`: an object, a folder's objects, a glob's matches) and each object is fetched once
    (one GET) into a temporary folder the block owns; a local path is passed as it is.

    Parameters
    ----------
    paths
        Local paths and URLs.
    beside
        Whether a URL naming one object brings the objects of its folder (not below it) too, for readers
        that look for a file beside the one given (an lm-eval results file beside its samples, a HELM run's
        other files); only the object named is passed on.

    Yields
    ------
    tuple[list[str | os.PathLike[str]], dict[str, str]]
        The paths to read (a local one as given; a URL's place in the folder: its file, its folder, or its
        glob's matches) and the names to show: local place → URL (longest first), so that what a reader says
        of a fetched file (or of a file it looked for beside one) names its URL.

    Raises
    ------
    InputFormatError
        As :func:`list_url` and :func:`read_bytes`: one line naming the URL.

    Examples
    --------
    >>> with fetched(["data/plan.csv"]) as (local, names):
    ...     local, names
    (['data/plan.csv'], {})
    """
    import shutil
    import tempfile
    from pathlib import Path

    if not any(is_url(str(p)) for p in paths):
        yield list(paths), {}
        return
    folder = Path(tempfile.mkdtemp(prefix="evalframe-fetched-"))
    try:
        local: list[str | os.PathLike[str]] = []
        names: dict[str, str] = {}
        for i, given in enumerate(paths):
            path = str(given)
            if not is_url(path):
                local.append(given)
                continue
            listed = list_url(path)
            own, objects = _placed(path, listed)
            if beside and listed == [path] and not glob.has_magic(_key(path)):
                parent = path.rsplit("/", 1)[0]
                around = [u for u in list_url(parent + "/") if "/" not in u.removeprefix(parent + "/")]
                objects += [(u, u.removeprefix(parent + "/")) for u in around if u != path]
            for url, relative in objects:
                target = folder / str(i) / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(read_bytes(url))
            if objects:  # the copies' folder is the URL's parent: a file named beside a copy is named by its URL
                names[str(folder / str(i))] = objects[0][0].removesuffix("/" + objects[0][1])
            if own:
                local.append(str(folder / str(i) / own))
                names[str(folder / str(i) / own)] = path.rstrip("/")
            else:
                local += [str(folder / str(i) / r) for _, r in objects]
        yield local, dict(sorted(names.items(), key=lambda kv: -len(kv[0])))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

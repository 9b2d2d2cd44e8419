"""``evalframe audit`` with URLs: the same report as the local files; a missing, denied or unreachable store is
exit 2 with one line naming the URL and no secret."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.cli.support import ORBIT, ORBIT_ARGS, run
from tests.objectstore.conftest import (
    SECRET,
    S3Server,
    assert_same_outputs,
    closed_port,
    enforced_auth,
    one_error_line,
    store_args,
)


def test_the_json_report_from_the_store_is_the_local_one(s3: S3Server, tmp_path: Path) -> None:
    plan = s3.put("cli/orbit/plan.csv", (ORBIT / "plan.csv").read_bytes())
    results = s3.put("cli/orbit/results.csv", (ORBIT / "results.csv").read_bytes())
    local_args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv")]
    code, local, _ = run([*local_args, "--candidates", "A,B", "--format", "json", "--out", str(tmp_path / "l")])
    assert code == 0
    args = ["audit", "--plan", plan, "--results", results, "--candidates", "A,B", *store_args(s3)]
    code, remote, err = run([*args, "--format", "json", "--out", str(tmp_path / "r")])
    assert code == 0, err
    assert SECRET not in remote
    names = {"s3://evals/cli/orbit/": f"{ORBIT}/"}
    assert json.loads(remote.replace(*next(iter(names.items())))) == json.loads(local)
    assert_same_outputs(tmp_path / "l", tmp_path / "r", names)
    assert all(SECRET.encode() not in f.read_bytes() for f in (tmp_path / "r").iterdir())


@pytest.mark.parametrize(
    ("name", "said"),
    [("results.csv", "no such object or folder in the store"), ("results/", "no such object or folder in the store")],
    ids=["object", "folder"],
)
def test_a_missing_object_or_folder_is_exit_2_naming_the_url(s3: S3Server, name: str, said: str) -> None:
    folder = f"cli/missing-{name.strip('/').replace('.', '-')}"  # moto refuses an unsigned overwrite
    plan = s3.put(f"{folder}/plan.csv", (ORBIT / "plan.csv").read_bytes())
    url = f"s3://evals/{folder}/{name}"
    args = ["audit", "--plan", plan, "--results", url, "--candidates", "A,B", *store_args(s3)]
    line = one_error_line(*run(args), url)
    assert said in line


def test_an_unreachable_endpoint_is_exit_2_in_seconds(s3: S3Server) -> None:
    import time

    options = {**s3.options, "aws_endpoint_url": closed_port()}
    url = "s3://evals/cli/orbit/plan.csv"
    started = time.monotonic()
    code, out, err = run(
        [
            "audit",
            "--plan",
            url,
            "--results",
            url,
            "--candidates",
            "A,B",
            *[f"--storage-option={k}={v}" for k, v in options.items()],
        ]
    )
    assert time.monotonic() - started < 20
    line = one_error_line(code, out, err, url)
    assert "cannot reach the store" in line


def test_a_url_with_credentials_in_it_is_refused_without_printing_them(s3: S3Server) -> None:
    url = f"https://user:{SECRET}@127.0.0.1:1/evals/results.csv"
    code, out, err = run(["audit", "--plan", url, "--results", url, "--candidates", "A,B"])
    assert "--storage-option" in one_error_line(code, out, err, "https://127.0.0.1/evals/results.csv")


def test_out_as_a_url_is_a_usage_error() -> None:
    code, out, err = run([*ORBIT_ARGS, "--out", "s3://evals/out/"])
    assert code == 2
    assert "outputs are written locally" in err


def test_spark_with_a_url_is_a_usage_error_naming_the_missing_connector(s3: S3Server) -> None:
    url = s3.put("cli/spark/results.csv", (ORBIT / "results.csv").read_bytes())
    code, out, err = run(
        [
            "audit",
            "--plan",
            str(ORBIT / "plan.csv"),
            "--results",
            url,
            "--candidates",
            "A,B",
            "--engine",
            "spark",
            *store_args(s3),
        ]
    )
    assert code == 2, err
    assert "hadoop-aws" in err and url in err


def test_a_storage_option_without_a_value_is_a_usage_error() -> None:
    code, _, err = run(
        [
            *["audit", "--plan", str(ORBIT / "plan.csv"), "--results", str(ORBIT / "results.csv")],
            "--candidates",
            "A,B",
            "--storage-option",
            "aws_region",
        ]
    )
    assert code == 2 and "KEY=VALUE" in err


def test_a_denied_credential_is_exit_2_naming_the_url_without_the_secret(s3: S3Server) -> None:
    plan = s3.put("cli/denied/plan.csv", (ORBIT / "plan.csv").read_bytes())
    with enforced_auth(s3):
        code, out, err = run(["audit", "--plan", plan, "--results", plan, "--candidates", "A,B", *store_args(s3)])
    line = one_error_line(code, out, err, plan)
    assert "access denied" in line


def test_a_denied_parquet_scan_is_exit_2_naming_the_url(s3: S3Server, tmp_path: Path) -> None:
    pl.read_csv(ORBIT / "results.csv", infer_schema=False).write_parquet(tmp_path / "r.parquet")
    url = s3.put("cli/denied/results.parquet", (tmp_path / "r.parquet").read_bytes())
    plan = s3.put("cli/denied/plan2.csv", (ORBIT / "plan.csv").read_bytes())
    with enforced_auth(s3):
        code, out, err = run(
            ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", url, "--candidates", "A,B", *store_args(s3)]
        )
    line = one_error_line(code, out, err, url)
    assert "access denied" in line
    assert plan


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("s3:///x.csv", "s3:///x.csv: no bucket or host after s3:// (write s3://BUCKET/KEY)"),
        ("s3://", "s3://: no bucket or host after s3:// (write s3://BUCKET/KEY)"),
        ("https://", "https://: no bucket or host after https:// (write https://HOST/PATH)"),
        (
            "s3://evals/cli/a//results.csv",
            "s3://evals/cli/a//results.csv: an object key with an empty, '.' or '..' segment is refused: "
            "name the object's key as stored",
        ),
        (
            "s3://evals/../results.csv",
            "s3://evals/../results.csv: an object key with an empty, '.' or '..' segment is refused: "
            "name the object's key as stored",
        ),
    ],
    ids=["no-bucket", "scheme-only", "https-no-host", "empty-segment", "dot-dot"],
)
def test_a_url_without_bucket_or_with_an_unaddressable_key_is_one_line(s3: S3Server, url: str, said: str) -> None:
    # before: a Rust panic dumped the parsed URL and exited 1 (no bucket); "cannot reach the store" (key)
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", url, "--candidates", "A,B", *store_args(s3)]
    line = one_error_line(*run(args), url)
    assert line == f"error: {said}"


def test_a_bucket_url_without_a_key_is_the_bucket_s_root_folder(s3: S3Server, tmp_path: Path) -> None:
    # before: "s3://BUCKET" was read as one Parquet file ("could not extract bucket/key ... write it again")
    from evalframe.load.remote import list_url, storage_options

    s3.put("rootcase/results.csv", (ORBIT / "results.csv").read_bytes())
    with storage_options(s3.options):
        assert "s3://evals/rootcase/results.csv" in list_url("s3://evals")
        assert list_url("s3://evals") == list_url("s3://evals/")


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (
            "bogus_key=x",
            "(UnknownConfigurationKeyError: Configuration key: 'bogus_key' is not valid for store 'S3'.)",
        ),
        ("max_retries=abc", "(ValueError: invalid literal for int() with base 10: 'abc')"),
        ("timeout=xyz", '(GenericError: Generic Config error: failed to parse "xyz" as Duration)'),
    ],
    ids=["unknown-key", "retries-not-a-number", "timeout-not-a-duration"],
)
def test_a_storage_option_the_store_refuses_is_one_line_naming_the_url(s3: S3Server, option: str, said: str) -> None:
    # before: a traceback and exit 1 (unknown key), a Rust debug dump (duration), an unnamed int() error
    folder = "cli/badoption-" + option.split("=")[0]  # moto refuses an unsigned overwrite
    url = s3.put(f"{folder}/results.csv", (ORBIT / "results.csv").read_bytes())
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", url, "--candidates", "A,B", *store_args(s3)]
    line = one_error_line(*run([*args, f"--storage-option={option}"]), url)
    assert line == f"error: {url}: a --storage-option is not valid for this store {said}"


def test_the_aws_variables_alone_reach_a_plain_http_endpoint(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: AWS_ALLOW_HTTP (read per the README) was ignored once evalframe set the client's timeouts:
    # exit 2 "cannot reach the store (... HTTP error: builder error)"
    url = s3.put("cli/envonly/results.csv", (ORBIT / "results.csv").read_bytes())
    for key, value in s3.options.items():
        monkeypatch.setenv(key.upper(), value)
    args = ["audit", "--plan", str(ORBIT / "plan.csv"), "--results", url, "--candidates", "A,B", "--format", "json"]
    code, out, err = run(args)
    assert code == 0, err
    summary = {row["candidate"]: row["passed"] for row in json.loads(out)["summary"]}
    # results.csv: A's rows quote=1, refund=1 (privacy, handoff missing); B's quote, refund, privacy 1, handoff 0
    assert summary == {"A": 2, "B": 3}
    assert SECRET not in out + err

"""``engine.in_memory`` sets polars' engine affinity for a call and gives the caller's settings back after it."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import polars as pl
import pytest

from evalframe.engine import in_memory


def affinity() -> str | None:
    return os.environ.get("POLARS_ENGINE_AFFINITY")


@pytest.fixture(autouse=True)
def streaming_user() -> Iterator[None]:
    """A user who chose the streaming engine and 7 table rows; their settings are theirs again after the test."""
    with pl.Config(engine_affinity="streaming", tbl_rows=7):
        yield


def test_a_nested_call_gives_the_outer_call_its_affinity_and_the_user_theirs() -> None:
    seen: list[tuple[str, str | None]] = []

    @in_memory
    def inner() -> None:
        seen.append(("inner", affinity()))

    @in_memory
    def outer() -> None:
        seen.append(("outer before", affinity()))
        inner()
        seen.append(("outer after", affinity()))

    outer()
    assert seen == [("outer before", "in-memory"), ("inner", "in-memory"), ("outer after", "in-memory")]
    assert (affinity(), pl.Config.state(if_set=True)["POLARS_FMT_MAX_ROWS"]) == ("streaming", "7")


def test_a_raising_call_restores_the_user_s_affinity() -> None:
    @in_memory
    def fails() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        fails()
    assert affinity() == "streaming"


def test_overlapping_calls_on_two_threads_restore_the_user_s_affinity_after_the_last() -> None:
    # first enters, second enters, first leaves, second leaves: the order that left "in-memory" set for good
    # when each call saved what it found and restored it on leaving.
    second_in, first_out = threading.Event(), threading.Event()
    seen: dict[str, str | None] = {}

    @in_memory
    def first() -> None:
        assert second_in.wait(10)

    @in_memory
    def second() -> None:
        second_in.set()
        assert first_out.wait(10)
        seen["second, after first left"] = affinity()

    def run_first() -> None:
        first()
        first_out.set()

    threads = [threading.Thread(target=run_first), threading.Thread(target=second)]
    threads[0].start()
    while affinity() != "in-memory":  # the first call has entered
        threading.Event().wait(0.001)
    threads[1].start()
    for thread in threads:
        thread.join(10)
    assert seen == {"second, after first left": "in-memory"}
    assert affinity() == "streaming"

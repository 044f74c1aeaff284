"""Shards: a stable split of the fleet by instance name, the same on every machine, and `I/N` as given."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from cmp.check.output.shards import Shard, parse, shard_of
from cmp.errors import UsageError


def test_an_app_falls_to_the_same_shard_on_every_machine() -> None:
    """Pinned: a change of the hash would move apps between shards of a CI matrix that is half upgraded."""
    assert [shard_of("dev-shoong-order", count) for count in (1, 2, 3, 4, 5)] == [1, 1, 3, 3, 3]
    assert [shard_of("argocd_x", count) for count in (1, 2, 3, 4, 5)] == [1, 2, 2, 4, 1]


def test_the_shard_does_not_depend_on_the_process_hash_seed() -> None:
    code = "from cmp.check.output.shards import shard_of; print(shard_of('team-a', 5))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], env={"PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert seen == {"2\n"}


def test_every_app_is_in_exactly_one_shard_and_the_shards_are_about_even() -> None:
    names = [f"app-{number}" for number in range(4000)]
    for count in (1, 2, 3, 4, 5):
        holders = Counter(sum(Shard(index, count).holds(name) for index in range(1, count + 1)) for name in names)
        assert holders == {1: len(names)}
        sizes = Counter(shard_of(name, count) for name in names)
        assert set(sizes) == set(range(1, count + 1))
        assert max(sizes.values()) < 1.15 * len(names) / count


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("2", "--shard '2' is not I/N (shard I of N, e.g. --shard 2/4)"),
        ("1/0", "--shard 1/0: N must be 1 to 1000"),
        ("0/4", "--shard 0/4: I must be 1 to 4 (shards count from 1)"),
        ("5/4", "--shard 5/4: I must be 1 to 4 (shards count from 1)"),
        ("-1/4", "--shard '-1/4' is not I/N (shard I of N, e.g. --shard 2/4)"),
    ],
)
def test_a_shard_that_is_not_i_of_n_is_a_usage_error(given: str, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse(given)
    assert str(refused.value) == message


def test_a_shard_reads_as_i_of_n() -> None:
    assert parse(" 3/4 ") == Shard(3, 4)
    assert str(Shard(3, 4)) == "3/4"

"""Cache writes held for after the answer: done at once unless held, then each on its own."""

from __future__ import annotations

from cmp.cache import deferred


def test_writes_are_done_at_once_unless_held_then_each_on_its_own_at_the_flush() -> None:
    done: list[str] = []
    deferred.write(lambda: done.append("at once"))
    assert done == ["at once"]
    deferred.hold()
    try:
        deferred.write(lambda: done.append(str(1 / 0)))
        deferred.write(lambda: done.append("later"))
        assert done == ["at once"]
    finally:
        deferred.flush()
    assert done == ["at once", "later"]
    deferred.write(lambda: done.append("at once again"))  # a flush ends the holding
    assert done[-1] == "at once again"

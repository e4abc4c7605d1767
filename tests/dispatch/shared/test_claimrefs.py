"""Claim refs: what their commits say, leases, and this clone's unfinished claims."""

from __future__ import annotations

from control_room.dispatch.shared import claimrefs
from control_room.room.layout import Room


def test_a_claim_commit_says_who_holds_the_task_until_when() -> None:
    text = claimrefs.message("t1", "m1", 1_800_000_000.4, {"pid": 7})
    assert text == 'control-room claim: t1 by m1 until 1800000000\n\n{"pid": 7}\n'
    ref = claimrefs.parse("t1", "abc", text.split("\n")[0])
    assert (ref.host, ref.until, ref.live) == ("m1", 1_800_000_000.0, True)


def test_any_other_commit_is_a_finished_claim_and_an_unreadable_claim_is_held_lease_over() -> None:
    assert claimrefs.parse("t1", "abc", "control-room: a cycle ended on m2").live is False
    broken = claimrefs.parse("t1", "abc", "control-room claim: t1 by m1 until soon")
    assert (broken.live, broken.host, claimrefs.lease_over(broken, 0, now=1.0)) == (True, "?", True)


def test_a_lease_is_over_after_its_end_plus_grace() -> None:
    ref = claimrefs.Ref("t1", "abc", "m1", 100.0)
    assert claimrefs.lease_over(ref, 60, now=160.0) is False
    assert claimrefs.lease_over(ref, 60, now=160.5) is True
    assert claimrefs.lease_over(claimrefs.Ref("t1", "abc", None, 0.0), 0, now=1e12) is False


def test_unfinished_claims_are_remembered_until_forgotten(room: Room) -> None:
    assert claimrefs.pending(room) == {}
    claimrefs.remember(room, "t1", "a" * 40)
    claimrefs.remember(room, "t2", "b" * 40)
    assert claimrefs.pending(room) == {"t1": "a" * 40, "t2": "b" * 40}
    claimrefs.forget(room, "t1")
    claimrefs.forget(room, "gone")
    assert claimrefs.pending(room) == {"t2": "b" * 40}

"""control_room.ledger.write: append chains each writer's lines, after a torn line and under load."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support import data_lines, ev, five_lines, lineno

from control_room.errors import RoomInvalidError
from control_room.ledger import append, write
from control_room.ledger.line import HEADER, PREAMBLE, SEPARATOR, parse, render
from control_room.ledger.verify import verify
from control_room.ledger.write import restore_header
from control_room.store import lock


def test_append_then_parse_round_trip(ledger: Path) -> None:
    entry = append(ledger, ev("result"), task="t1", route="r1", adapter="claude",
                   outcome="pass", cost_usd=0.125, detail="took 3 rounds")  # fmt: skip
    [line] = data_lines(ledger)
    assert parse(line) == entry
    assert (entry.writer, entry.event, entry.task, entry.route, entry.adapter) == (
        "tester", "result", "t1", "r1", "claude",
    )  # fmt: skip
    assert (entry.outcome, entry.cost_usd, entry.detail, entry.prev) == (
        "pass", "0.125", "took 3 rounds", "-",
    )  # fmt: skip
    assert len(entry.id) == 16 and len(entry.hash) == 12


def test_each_line_chains_to_the_previous_line_of_its_writer(ledger: Path) -> None:
    a1 = append(ledger, ev("e"), writer="a")
    b1 = append(ledger, ev("e"), writer="b")
    a2 = append(ledger, ev("e"), writer="a")
    b2 = append(ledger, ev("e"), writer="b")
    assert [a1.prev, b1.prev, a2.prev, b2.prev] == ["-", "-", a1.hash, b1.hash]


def test_writer_comes_from_the_environment(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "ci box|7")
    assert append(ledger, ev("e")).writer == "ci-box-7"


def test_append_to_a_missing_ledger_is_a_no_room_error(tmp_path: Path) -> None:
    from control_room.errors import NoRoomError

    path = tmp_path / "LEDGER.md"
    with pytest.raises(NoRoomError) as err:
        append(path, ev("e"))
    assert str(err.value) == (
        f"{path} is missing; restore it (git checkout) or run `control-room init` to start a new one"
    )


def test_append_after_a_torn_line_starts_a_new_line(ledger: Path) -> None:
    five_lines(ledger)
    ledger.write_bytes(ledger.read_bytes()[:-20])
    entry = append(ledger, ev("after"))
    lines = data_lines(ledger)
    assert len(lines) == 6 and parse(lines[5]) == entry
    assert [(p.line, p.kind) for p in verify(ledger).problems] == [(lineno(5), "torn")]


# one process, many appends: the descriptor kept open between them -------------------------


def test_a_kept_descriptor_follows_the_file_when_it_is_replaced(ledger: Path) -> None:
    first = append(ledger, ev("e"), detail="before")
    old = ledger.open("rb")  # the file as it was: the kept descriptor still has it open
    copy = ledger.with_name("copy.md")
    copy.write_bytes(ledger.read_bytes())
    os.replace(copy, ledger)  # what git does: a new file under the old name
    second = append(ledger, ev("e"), detail="after")
    assert old.read().decode().count(" | e | ") == 1  # the replaced file got nothing
    old.close()
    assert [parse(line) for line in data_lines(ledger)] == [first, second]
    assert second.prev == first.hash and verify(ledger).ok


def test_the_chain_follows_a_line_another_process_appended(ledger: Path) -> None:
    mine = append(ledger, ev("e"), writer="w")
    theirs = subprocess.run(
        [sys.executable, "-c", APPEND_ONE, str(ledger), "w"], capture_output=True, text=True, check=True
    ).stdout.strip()
    after = append(ledger, ev("e"), writer="w")
    assert theirs != mine.hash and after.prev == theirs
    assert verify(ledger).ok


APPEND_ONE = """
import sys
from pathlib import Path
from control_room.ledger import append, write
from control_room.ledger.events import Event
print(append(Path(sys.argv[1]), Event("e", (), ("detail",), "a test line"), writer=sys.argv[2]).hash)
"""


def test_an_edit_in_place_that_keeps_the_size_is_seen(ledger: Path) -> None:
    """Only the file's size says nobody wrote since our last line; its bytes must say so too."""
    append(ledger, ev("e"), detail="one")
    data = ledger.read_bytes()
    with ledger.open("r+b") as f:  # same file, same size: the last newline overwritten
        f.write(data[:-1] + b" ")
    entry = append(ledger, ev("e"), detail="two")
    lines = data_lines(ledger)
    assert len(lines) == 2 and parse(lines[1]) == entry  # the torn line was closed first
    assert entry.prev == "-"  # the torn line is no line of ours to chain to


@pytest.mark.skipif(not hasattr(os, "O_NOATIME"), reason="O_NOATIME is Linux's")
def test_a_ledger_that_is_not_ours_is_opened_without_noatime(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """O_NOATIME needs the file's owner (EPERM otherwise): another user's ledger is opened as before."""
    real, flags = os.open, []

    def not_owner(path: object, how: int, *args: object, **kw: object) -> int:
        if Path(str(path)) != ledger:
            return real(path, how, *args, **kw)  # type: ignore[arg-type]  # (the rewrite lock's)
        flags.append(how)
        if how & os.O_NOATIME:
            raise PermissionError(1, "Operation not permitted")
        return real(path, how, *args, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(write.os, "open", not_owner)
        first = append(ledger, ev("e"))
    assert [bool(f & os.O_NOATIME) for f in flags] == [True, False]
    second = append(ledger, ev("e"))
    assert second.prev == first.hash and verify(ledger).ok


def test_a_failed_write_is_cut_back_and_the_next_append_opens_the_file_again(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from control_room.errors import ControlRoomError

    first = append(ledger, ev("e"))
    before, kept = ledger.read_bytes(), write._kept
    real = os.write
    with monkeypatch.context() as m, pytest.raises(ControlRoomError, match="short write"):
        m.setattr(write.os, "write", lambda fd, data: real(fd, data[:10]))  # a disk that filled up
        append(ledger, ev("e"))
    assert ledger.read_bytes() == before and write._kept is None
    second = append(ledger, ev("e"))
    assert write._kept is not kept and second.prev == first.hash and verify(ledger).ok


def test_a_forked_child_locks_the_ledger_through_a_descriptor_of_its_own(ledger: Path) -> None:
    """flock locks belong to an open file, which a fork shares: the child must open its own."""
    append(ledger, ev("e"))
    assert write._kept is not None
    lock.hold(write._kept.fd, ledger)  # the parent holds the ledger's lock
    pid = os.fork()
    if pid == 0:  # the child: may it take the lock the parent holds? It must not
        os._exit(0 if not lock.try_hold(write._keep(ledger).fd) else 1)
    _, status = os.waitpid(pid, 0)
    lock.release(write._kept.fd)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_forked_child_draws_event_ids_of_its_own(ledger: Path) -> None:
    """Ids come from a pool drawn at once: a child must not hand out the ones its parent will."""
    append(ledger, ev("e"))  # the parent's pool is drawn, 255 ids left in it
    read, send = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(send, append(ledger, ev("e"), detail="child").id.encode())
        os._exit(0)
    os.close(send)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    ours = [append(ledger, ev("e"), detail="parent").id for _ in range(3)]
    assert len(child) == 16 and child not in ours
    report = verify(ledger)
    assert (report.ok, report.lines) == (True, 5)


def test_threads_of_one_process_appending_at_once(ledger: Path) -> None:
    def work(k: int) -> None:
        for i in range(300):
            append(ledger, ev("e"), task=f"th{k}", detail=str(i), writer="w")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = verify(ledger)
    assert (report.ok, report.lines) == (True, 1200)


def test_a_line_takes_the_time_the_lock_was_got(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines stay in time order: the time is read once the lock is ours, not before it."""
    clock = ["2026-01-31T12:00:00Z"]
    real_hold = lock.hold

    def hold(fd: int, what: Path) -> None:
        real_hold(fd, what)
        clock[0] = "2026-01-31T12:00:01Z"  # the second turned while we waited for the lock

    monkeypatch.setattr(write, "now_iso", lambda: clock[0])
    monkeypatch.setattr(lock, "hold", hold)
    entry = append(ledger, ev("e"))
    assert entry.time == "2026-01-31T12:00:01Z" and [parse(ln) for ln in data_lines(ledger)] == [entry]
    assert verify(ledger).ok


def test_a_hand_made_last_line_links_with_its_hash_cell_escaped(ledger: Path) -> None:
    """The previous line's hash cell is whatever that line says: escaped again in ``prev``."""
    odd = "| 2026-01-31T12:00:00Z | 0000000000000000 | w | e |  |  |  |  | 0 |  | - | a|b\tc |"
    ledger.write_text(ledger.read_text() + odd + "\n")
    entry = append(ledger, ev("e"), writer="w")
    assert entry.prev == "a|b\tc" and data_lines(ledger) == [odd, render(entry)[0]]


# many processes at once -----------------------------------------------------------------

WORKER = """
import os, sys, time
from pathlib import Path
from control_room.errors import RoomInvalidError
from control_room.ledger import append, write
from control_room.ledger.events import Event
ev = Event("bench", (), ("task", "detail"), "a test line")
path, writer, proc, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(500):
    append(path, ev, task=proc, detail=f"{proc} {i}", writer=writer)
"""


def test_eight_processes_appending_at_once(ledger: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ledger), f"w{p % 4}", f"p{p}", str(go)],
            stderr=subprocess.PIPE,
        )
        for p in range(8)
    ]
    go.touch()  # two processes share each writer name, so their chains interleave too
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 8, errors

    lines = data_lines(ledger)
    assert len(lines) == 4000
    entries = [parse(line) for line in lines]
    assert all(e is not None for e in entries)
    assert len({e.id for e in entries}) == 4000  # type: ignore[union-attr]
    for p in range(8):  # each process's lines are whole and in its own order
        mine = [e.detail for e in entries if e.task == f"p{p}"]  # type: ignore[union-attr]
        assert mine == [f"p{p} {i}" for i in range(500)]
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 4000, {"w0", "w1", "w2", "w3"})


# restore_header: a ledger that lost its table header gets it back, every line kept -------------

PROSE = PREAMBLE.split(HEADER)[0]  # "# LEDGER" and its paragraph, with the blank line after


def test_a_ledger_with_its_header_is_left_alone(ledger: Path) -> None:
    five_lines(ledger)
    before = ledger.read_bytes()
    assert restore_header(ledger) is None
    assert ledger.read_bytes() == before


def test_the_header_line_put_back_gives_the_very_same_file(ledger: Path) -> None:
    five_lines(ledger)
    whole = ledger.read_text()
    ledger.write_text(whole.replace(HEADER + "\n", ""))
    assert restore_header(ledger) == 5
    assert ledger.read_text() == whole
    assert verify(ledger).ok


def test_a_lost_preamble_comes_back_above_the_lines(ledger: Path) -> None:
    lines = five_lines(ledger)
    ledger.write_text("".join(f"{ln}\n" for ln in lines))
    assert restore_header(ledger) == 5
    assert ledger.read_text() == PREAMBLE + "".join(f"{ln}\n" for ln in lines)
    report = verify(ledger)
    assert (report.ok, report.lines) == (True, 5)


def test_what_a_person_wrote_above_stays_above_the_header(ledger: Path) -> None:
    lines = five_lines(ledger)
    ledger.write_text("my notes\n\n" + "".join(f"{ln}\n" for ln in lines[:4]) + lines[4])  # torn tail
    assert restore_header(ledger) == 5
    assert ledger.read_text() == (
        PROSE.rstrip("\n")
        + "\n\nmy notes\n\n"
        + f"{HEADER}\n{SEPARATOR}\n"
        + "".join(f"{ln}\n" for ln in lines)
    )
    assert verify(ledger).ok


def test_an_empty_ledger_gets_its_preamble(tmp_path: Path) -> None:
    path = tmp_path / "LEDGER.md"
    path.write_bytes(b"")
    assert restore_header(path) == 0
    assert path.read_text() == PREAMBLE


def test_lines_appended_while_the_header_is_restored_are_all_kept(ledger: Path, tmp_path: Path) -> None:
    """Writers waiting for the lock while the file is replaced append to the new file."""
    five_lines(ledger)
    ledger.write_text(ledger.read_text().replace(HEADER + "\n", ""))
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ledger), f"w{p}", f"p{p}", str(go)], stderr=subprocess.PIPE
        )
        for p in range(2)
    ]
    go.touch()
    while ledger.read_text().count(" | p") < 50:  # the writers are at work: restore under them
        pass
    assert restore_header(ledger) is not None
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], errors
    report = verify(ledger)
    assert (report.ok, report.lines) == (True, 1005)
    for p in range(2):
        mine = [e.detail for e in map(parse, data_lines(ledger)) if e and e.task == f"p{p}"]
        assert mine == [f"p{p} {i}" for i in range(500)]


def test_a_ledger_that_is_a_link_is_never_written_through(ledger: Path, tmp_path: Path) -> None:
    outside = tmp_path / "a-persons-file.md"
    outside.write_text(PREAMBLE)  # it even looks like a ledger
    ledger.unlink()
    ledger.symlink_to(outside)  # as an agent's run left it
    for writes in (lambda: append(ledger, ev("e"), detail="x"), lambda: restore_header(ledger)):
        with pytest.raises(RoomInvalidError, match=rf"^{ledger} is a link \(to {outside}\), not a file of"):
            writes()
    assert outside.read_text() == PREAMBLE


def test_an_append_reads_the_host_id_once_until_the_writer_is_asked_again(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTROL_ROOM_WRITER")
    (ledger.parent / write.HOST_FILE).write_text("box-a\n", encoding="utf-8")
    assert append(ledger, ev("claim"), task="t1").writer == "box-a"
    (ledger.parent / write.HOST_FILE).write_text("box-b\n", encoding="utf-8")  # `sync --host` elsewhere
    assert append(ledger, ev("claim"), task="t2").writer == "box-a"  # kept: no read an append
    assert write.writer_name(ledger.parent) == "box-b"  # asked afresh (a claim, each cycle)
    assert append(ledger, ev("claim"), task="t3").writer == "box-b"

"""control_room.interrupt: Interrupted's codes and words, handled() turning real signals into it and
restoring the handlers, deferred() holding a signal back until its step is over."""

from __future__ import annotations

import signal
import threading

import pytest

from control_room import errors, interrupt

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
CODES = {signal.SIGINT: errors.INTERRUPTED, signal.SIGTERM: errors.TERMINATED, signal.SIGHUP: errors.HANGUP}


def handlers() -> dict[int, object]:
    return {s: signal.getsignal(s) for s in SIGNALS}


def blocked() -> set[int]:
    """The signals this thread holds back now."""
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


def test_the_three_signals_and_their_exit_codes() -> None:
    assert interrupt.CODES == {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
    assert interrupt.SIGNALS == (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_interrupted_carries_the_signal_its_name_and_its_exit_code(sig: signal.Signals) -> None:
    exc = interrupt.Interrupted(sig)
    assert (exc.signum, exc.name, exc.exit_code) == (sig, sig.name, CODES[sig])
    assert (exc.outcome, exc.said) == ("", [])
    assert str(exc) == f"interrupted by {sig.name}"


def test_interrupted_says_what_was_done_about_it() -> None:
    exc = interrupt.Interrupted(signal.SIGTERM)
    exc.outcome = "t1 is back in the queue, no round used"
    assert str(exc) == "interrupted by SIGTERM: t1 is back in the queue, no round used"


def test_another_signal_exits_128_plus_its_number() -> None:
    exc = interrupt.Interrupted(signal.SIGUSR1)
    assert (exc.name, exc.exit_code) == ("SIGUSR1", 128 + signal.SIGUSR1)


def test_no_except_exception_swallows_it() -> None:
    assert issubclass(interrupt.Interrupted, BaseException)
    assert not issubclass(interrupt.Interrupted, Exception)
    with pytest.raises(interrupt.Interrupted):
        try:
            raise interrupt.Interrupted(signal.SIGINT)
        except Exception:  # what library code catches: it passes through
            pytest.fail("an `except Exception` caught Interrupted")


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_handled_turns_a_real_signal_into_interrupted_and_restores_the_handlers(sig: signal.Signals) -> None:
    before = handlers()
    with pytest.raises(interrupt.Interrupted) as err, interrupt.handled():
        assert all(signal.getsignal(s) is interrupt._raise for s in SIGNALS)
        signal.raise_signal(sig)
        pytest.fail("the signal did not interrupt")
    assert (err.value.signum, err.value.exit_code) == (sig, CODES[sig])
    assert handlers() == before


def test_handled_restores_the_handlers_when_nothing_came() -> None:
    before = handlers()
    with interrupt.handled():
        pass
    assert handlers() == before


def test_handled_off_the_main_thread_changes_no_handler() -> None:
    """Only the main thread may set handlers: elsewhere handled() just runs its block."""
    seen: list[dict[int, object]] = []
    before = handlers()

    def body() -> None:
        with interrupt.handled():
            seen.append(handlers())

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == [before]


def test_deferred_holds_a_signal_until_the_step_is_over_then_lets_it_through() -> None:
    steps: list[str] = []
    before = handlers()
    with pytest.raises(interrupt.Interrupted) as err, interrupt.handled():
        with interrupt.deferred():
            assert set(interrupt.SIGNALS) <= blocked()
            signal.raise_signal(signal.SIGTERM)
            steps.append("renamed")
            steps.append("claim written")  # the step runs to its end
        steps.append("after the step")
    assert steps == ["renamed", "claim written"]
    assert err.value.signum == signal.SIGTERM
    assert not set(interrupt.SIGNALS) & blocked() and handlers() == before


def test_deferred_puts_the_old_mask_back() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    try:
        with interrupt.deferred():
            assert {signal.SIGUSR1, *interrupt.SIGNALS} <= blocked()
        assert signal.SIGUSR1 in blocked() and not set(interrupt.SIGNALS) & blocked()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])


def test_deferred_off_the_main_thread_blocks_nothing() -> None:
    seen: list[set[int]] = []

    def body() -> None:
        with interrupt.deferred():
            seen.append(blocked() & set(interrupt.SIGNALS))

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == [set()]


def test_a_forked_child_dies_by_a_signal_and_the_parent_keeps_its_handlers() -> None:
    """A child of ``fork`` starts with the default actions, so a signal sent to it (the whole
    group gets Ctrl-C) ends it instead of raising Interrupted in a copy of the cycle; a signal
    that came during the fork is the parent's, after it."""
    import os

    with interrupt.handled():
        before = handlers()
        r, w = os.pipe()
        pid = interrupt.fork()
        if pid == 0:  # the child: default actions, nothing held back; it waits to be ended
            ok = all(signal.getsignal(s) is signal.SIG_DFL for s in SIGNALS) and not blocked() & set(SIGNALS)
            os.write(w, b"y" if ok else b"n")
            signal.pause()
            os._exit(0)  # pragma: no cover: the signal ends it first
        os.close(w)
        assert os.read(r, 1) == b"y"
        os.close(r)
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
        assert handlers() == before and not blocked() & set(SIGNALS)
        forked: list[int] = []
        # a signal that came during the fork: held back across it, then the parent's
        with pytest.raises(interrupt.Interrupted) as err, interrupt.deferred():
            signal.raise_signal(signal.SIGINT)  # to this thread: pending until the mask lifts
            forked.append(interrupt.fork())
            if forked[0] == 0:
                os._exit(0)
        assert err.value.signum == signal.SIGINT and forked[0] > 0  # after the fork, in the parent
        _, status = os.waitpid(forked[0], 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0  # the child never had it


def test_no_child_is_forked_while_other_threads_run() -> None:
    """A child inherits the locks other threads hold (an import's, a logger's) and could hang on
    one: the caller is told, as when a fork fails, and does the work itself."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        with pytest.raises(OSError, match="no child forked"):
            interrupt.fork()
    finally:
        release.set()
        other.join()

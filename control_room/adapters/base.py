"""The adapter contract: what every agent CLI adapter declares and the one method it writes.

An adapter turns an ``Invocation`` (the task, its prompt, the work dir, the model, its
``Setup``) into an argv list, says how the prompt goes in (stdin, or a short argument pointing
at the brief file the CLI reads itself: never the prompt itself as an argument), and reads the
CLI's output back into an ``Outcome``. It never runs anything itself and never touches the
room's files: the cycle writes the files ``prepare`` returns into the adapter's state folder,
runs the argv through ``proc.run`` with the environment ``env`` returns, reads the files
``outputs`` names from the run's results folder, and hands all of it to ``read``.
No adapter ever adds a permission-bypass flag; ``bypass_flags`` only documents them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from control_room.adapters.output import last_line
from control_room.errors import InvalidError
from control_room.plain import Frozen, Plain

if TYPE_CHECKING:  # proc imports subprocess and threading: only a cycle needs them
    from control_room.adapters.faults import Fault
    from control_room.proc import Result

POINTER = (
    "Your full instructions are in the file {brief}. Read that file now and follow it exactly; "
    "end your answer with the report it asks for."
)


# What a CLI that insists on an API key gets when the endpoint needs none (no ``api_key_env``).
NO_KEY = "none"

# How the failure of a run ended by a cap starts, whoever ended it (the CLI itself or the room's
# live meter, dispatch/run/spend.py): past its dollars or tokens, past its max_turns.
COST_CAP = "cost-cap"
TURN_CAP = "turn-cap"

# The dispatcher's variables a run sees (docs/adapters.md "The environment"): a name, or a prefix
# ending in ``*``. CONTROL.md ``env_allow`` widens an adapter's list; nothing else gets through.
# Every run, the probe, the command adapter and every validator: where programs are, the home,
# the language, and control-room's own.
MINIMAL_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "CONTROL_ROOM_*")
# What a real agent CLI needs besides: who and where it runs, its terminal, proxies and
# certificates (a company network), its config folders.
CLI_ENV = (
    *MINIMAL_ENV,
    *("USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "TMPDIR", "TZ", "XDG_*"),
    *(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "NO", "ALL")),
    *(f"{p}_proxy" for p in ("http", "https", "no", "all")),
    *("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"),
)

# The model providers a CLI that talks to many (aider, opencode) reads keys and endpoints of.
PROVIDERS = ("ANTHROPIC_", "OPENAI_", "GEMINI_", "OPENROUTER_", "DEEPSEEK_", "GROQ_", "MISTRAL_")
PROVIDER_VARS = tuple(f"{p}*" for p in PROVIDERS)
PROVIDER_KEYS = tuple(f"{p}API_KEY" for p in PROVIDERS)


def allowed(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether the variable ``name`` is one of ``patterns`` (names, and prefixes ending in ``*``)."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


class Setup(Frozen):
    """The adapter's entry in CONTROL.md ``adapters:``, a role's front matter overriding it key
    by key (docs/adapters.md). All empty, the default: the CLI runs as the user runs it, with
    the user's own login and settings, untouched."""

    __slots__ = ("api_key_env", "base_url", "isolated", "model")
    NAMES = ("base_url", "api_key_env", "model", "isolated")  # in the order docs and messages give them

    def __init__(
        self,
        base_url: str | None = None,
        api_key_env: str | None = None,
        model: str | None = None,
        isolated: bool = False,
    ) -> None:
        self.base_url = base_url  # the endpoint: a gateway, a local model server
        self.api_key_env = api_key_env  # the NAME of the variable holding the key, never the key
        self.model = model  # the model to ask for (a task's or role's `model` wins)
        self.isolated = isolated  # the CLI's home is the adapter's state folder, not the user's

    def given(self) -> list[str]:
        """The names of the settings that are set."""
        return [k for k in self.NAMES if getattr(self, k) not in (None, False)]


def new_session() -> str:
    """A fresh random UUID (version 4), as text: the session id a run gives a CLI that takes
    one (``Invocation.session``). Built from ``os.urandom``: ``uuid`` is not worth importing."""
    b = bytearray(os.urandom(16))
    b[6], b[8] = (b[6] & 0x0F) | 0x40, (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Invocation(Plain):
    """One run of an adapter's CLI: what its ``command`` is made from."""

    __slots__ = (
        "brief", "command", "extra_args", "max_turns", "model", "prompt", "results", "session",
        "settings", "setup", "state", "task", "workdir",
    )  # fmt: skip

    def __init__(
        self,
        task: Mapping[str, Any],
        prompt: str,
        brief: Path,
        workdir: Path,
        model: str | None = None,
        extra_args: list[str] | None = None,
        settings: Mapping[str, Any] | None = None,
        setup: Setup | None = None,
        state: Path | None = None,
        results: Path | None = None,
        command: list[str] | None = None,
        session: str | None = None,
        max_turns: int = 0,
    ) -> None:
        self.task = task  # the task (room/tasks.py Task): adapters read, never write it
        self.prompt = prompt
        self.brief = brief  # the prompt, written into the work dir
        self.workdir = workdir
        self.model = model
        self.extra_args: list[str] = [] if extra_args is None else extra_args
        self.settings: Mapping[str, Any] = (
            {} if settings is None else settings
        )  # CONTROL.md + role front matter
        self.setup = Setup() if setup is None else setup
        self.state = state  # the adapter's state folder (control-room/.adapters/NAME), if set up
        self.results = results  # the run's results folder (swarm/results/ID), where outputs go
        self.command = command  # the task's own `command` as argv (the probe runs it), if any
        # The id of this run's session, for a CLI that takes one from its caller (``--session-id``):
        # its usage log is then known before it starts (``Adapter.usage_log``). New for every run.
        self.session = new_session() if session is None else session
        self.max_turns = max_turns  # the task's (or CONTROL.md's) max_turns: 0, none


class Outcome(Plain):
    """What a run of the CLI said, as its adapter read it."""

    __slots__ = (
        "cost_usd",
        "error",
        "extra",
        "fault",
        "final_message",
        "input_tokens",
        "ok",
        "output_tokens",
    )

    def __init__(
        self,
        ok: bool,
        final_message: str,
        error: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        extra: dict[str, Any] | None = None,
        fault: Fault | None = None,
    ) -> None:
        self.ok = ok  # the CLI did its job (not: the task passed; the validator decides that)
        self.final_message = final_message  # where the report is looked for
        self.error = error  # one line: what went wrong
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cost_usd = cost_usd
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.fault = fault  # the provider refused (adapters/faults.py): set by ``Adapter.fault``


class Usage(Plain):
    """What one model request cost, as a CLI reports it while it runs (``Adapter.step_usage``).
    ``key``: the request's own id where the CLI may log one request more than once (gemini
    rewrites a message as its tool calls run), so that it is counted once."""

    __slots__ = ("cost_usd", "input_tokens", "key", "output_tokens")

    def __init__(
        self, input_tokens: int, output_tokens: int, cost_usd: float | None = None, key: str | None = None
    ) -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.cost_usd, self.key = cost_usd, key


class Adapter:
    name: ClassVar[str]
    binary: ClassVar[str | None]  # the executable looked up on PATH; None: none needed
    prompt_via: ClassVar[str] = "stdin"  # "stdin" or "file" (POINTER as an argument)
    bypass_flags: ClassVar[tuple[str, ...]] = ()  # documented; never added by the adapter
    context_window: ClassVar[int] = 200_000  # tokens, for the context-pressure figure
    install: ClassVar[str] = ""  # how a person installs the CLI
    exit_codes: ClassVar[dict[int, str]] = {0: "ok"}
    accepts: ClassVar[tuple[str, ...]] = ()  # the ``Setup`` settings this adapter acts on
    key_needs_url: ClassVar[bool] = False  # api_key_env is the key of the base_url's provider
    reads_faults: ClassVar[bool] = True  # False: the output is the task's own (probe, command)
    env_allow: ClassVar[tuple[str, ...]] = CLI_ENV  # the dispatcher's variables the CLI sees
    vendor_keys: ClassVar[tuple[str, ...]] = ()  # the user's own keys: never sent to a base_url

    def command(self, inv: Invocation) -> list[str]:
        raise NotImplementedError

    def check(self, setup: Setup) -> str | None:
        """What is wrong with this setup for this adapter, or None. A setting it does not act
        on is refused, never ignored: the run would quietly go to the user's own login."""
        unknown = [k for k in setup.given() if k not in self.accepts]
        if unknown:
            takes = ", ".join(self.accepts) or "none"
            return f"the {self.name} adapter does not act on {', '.join(unknown)} (it takes: {takes})"
        if self.key_needs_url and setup.api_key_env and not setup.base_url:
            return f"api_key_env needs a base_url: {self.name} takes it as the key of that endpoint"
        return None

    def prepare(self, inv: Invocation) -> dict[str, str]:
        """Files the CLI needs in the state folder (relative path -> text), written by the
        cycle before the run. Never a key: keys travel in the environment only."""
        return {}

    def outputs(self, inv: Invocation) -> tuple[str, ...]:
        """Files the CLI writes into the results folder (names), read back for ``read``."""
        return ()

    def executable(self, inv: Invocation) -> str | None:
        """The program that must be on PATH for this invocation."""
        return self.binary

    def stdin(self, inv: Invocation) -> bytes | None:
        return inv.prompt.encode("utf-8") if self.prompt_via == "stdin" else None

    def pointer(self, inv: Invocation) -> str:
        return POINTER.format(brief=inv.brief)

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        """What the CLI's environment needs for ``inv.setup`` (an endpoint, the key, a home),
        added to ``env``: the dispatcher's variables ``env_allow`` let through."""
        return env

    def environment(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        """The CLI's whole environment, what the cycle passes: with a ``base_url``, the user's
        own vendor keys (``vendor_keys``) are withheld first, so the endpoint gets only the key
        ``api_key_env`` names (which ``env`` puts where the CLI reads it); then ``env``."""
        if inv.setup.base_url and self.vendor_keys:
            env = {
                k: v for k, v in env.items() if k == inv.setup.api_key_env or not allowed(k, self.vendor_keys)
            }
        return self.env(inv, env)

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        """Default: the final message is stdout; the exit code says whether it worked.
        ``files``: the text of each file ``outputs`` named that the run wrote (passed only to
        an adapter that names some)."""
        return Outcome(
            ok=result.exit_code == 0,
            final_message=stdout,
            error=None if result.exit_code == 0 else self.explain(result, stderr),
        )

    def fault(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """The provider fault behind a run that failed (adapters/faults.py), or None: what the
        CLI said when it gave up (``refusal``), or, for a run killed at its wall clock, the
        provider's refusal it was still waiting out (``waiting``: a provider's kind only, never
        a context overflow). Never read from a run that worked, was stopped or was ended by its
        live cap, nor (``reads_faults`` False) from a CLI whose output the task writes."""
        if not self.reads_faults or result.stopped or result.ended:
            return None
        if result.timed_out:
            found = self.waiting(stdout, stderr)
            return found if found is not None and found.is_providers() else None
        return None if outcome.ok else self.refusal(result, stdout, stderr, outcome)

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """The fault a failed run's CLI reported as it gave up. Default: its own error words,
        ``outcome.error`` and the end of stderr; a CLI with a structured error overrides it."""
        from control_room.adapters.faults import recognise  # only for a run that failed

        return recognise(f"{outcome.error or ''}\n{stderr[-4000:]}")

    def waiting(self, stdout: str, stderr: str) -> Fault | None:
        """The provider's refusal a CLI killed at its wall clock was waiting out: read from its
        own retry notices, and only when the last thing it did was that retry (a model answer
        after it means it got through). None (the default): it says nothing while it retries,
        and the time-out is the task's failed round."""
        return None

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """The usage one JSON line of the CLI's output or usage log reports as it goes (one model
        request's), or None for a line that reports none. Only CLIs that report their usage
        step by step override it or ``text_usage``: the live spend cap reads them
        (dispatch/run/spend.py)."""
        return None

    def text_usage(self, line: str) -> Usage | None:
        """The same for a line of text output that is not JSON (aider's ``Tokens: ...`` line)."""
        return None

    def meters(self) -> bool:
        """Whether the CLI reports its usage as it runs (``step_usage`` or ``text_usage``)."""
        cls = type(self)
        return cls.step_usage is not Adapter.step_usage or cls.text_usage is not Adapter.text_usage

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """The folder the CLI keeps its usage log in (``usage_log``), for the run ``inv`` with
        the environment ``env``; None (the default): it keeps none."""
        return None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """Where, in ``usage_home``, the CLI logs its usage per model request (a glob): known
        before the run from ``inv`` (``event`` None: a CLI that takes ``inv.session`` as its
        session id), or named by a line of its stdout (``event``: codex's ``thread.started``).
        None (the default): no log. The live spend cap then reads that log, through
        ``step_usage``, instead of stdout."""
        return None

    def explain(self, result: Result, stderr: str) -> str:
        """One line: how the run ended (exit code and its meaning, or the kill) and the cause,
        ``stderr``'s last line (or whatever text the caller found the cause in)."""
        last = last_line(stderr)
        if result.timed_out:
            return killed(result) + (f"; its last line: {last}" if last else "")
        if result.stopped:
            return "the agent was killed because STOP appeared"
        code = result.exit_code
        meaning = self.exit_codes.get(code, "error") if code is not None else "killed"
        return f"{self.name} exited {code} ({meaning})" + (f": {last}" if last else "")

    def key(self, inv: Invocation, env: Mapping[str, str]) -> str | None:
        """The API key named by ``api_key_env`` (the cycle checked that it is set), else None."""
        name = inv.setup.api_key_env
        return env.get(name, "") if name else None

    def home(self, inv: Invocation) -> str:
        """The state folder, which an ``isolated`` CLI takes as its home."""
        if inv.state is None:
            raise InvalidError(f"adapter {self.name}: no state folder was given for its setup")
        return str(inv.state)

    def with_model(self, flag: str, inv: Invocation) -> list[str]:
        return [flag, inv.model] if inv.model else []


def killed(result: Result) -> str:
    """What ended a run killed at its wall clock: ``the agent was killed at its 60s time limit``."""
    at = f"{result.limit_s:g}s " if result.limit_s is not None else ""
    return f"the agent was killed at its {at}time limit"

"""``command``: any executable. Its argv template comes from the role's front matter or
CONTROL.md (``command_argv``), with ``{brief}``, ``{workdir}`` and ``{model}`` filled in; the
prompt also goes to its stdin. Its stdout is the final message."""

from __future__ import annotations

from control_room.adapters.base import MINIMAL_ENV, Adapter, Invocation
from control_room.errors import InvalidError


class Command(Adapter):
    name = "command"
    binary = None
    prompt_via = "stdin"
    install = "any executable: set command_argv in CONTROL.md or the role's front matter"
    accepts = ("model",)  # fills {model}
    reads_faults = False  # its output is the task's own program's: never a provider's word
    env_allow = MINIMAL_ENV

    def command(self, inv: Invocation) -> list[str]:
        template = inv.settings.get("command_argv")
        if not (isinstance(template, list) and template and all(isinstance(a, str) for a in template)):
            raise InvalidError(
                "the command adapter needs command_argv (a list such as "
                '["my-agent", "--brief", "{brief}"]) in CONTROL.md or the role\'s front matter'
            )
        values = {"brief": str(inv.brief), "workdir": str(inv.workdir), "model": inv.model or ""}
        try:
            return [a.format(**values) for a in template]
        except (KeyError, IndexError, ValueError) as exc:
            raise InvalidError(
                f"command_argv: bad placeholder {exc} (use {{brief}}, {{workdir}}, {{model}})"
            ) from None

    def executable(self, inv: Invocation) -> str | None:
        return self.command(inv)[0]

"""Install the real agent CLIs at their pinned versions into a cache folder outside the
repository, reused between runs: ``$CONTROL_ROOM_CLI_CACHE``, else ``~/.cache/control-room/clis``.

Each CLI gets a folder of its own, ``<name>-<version>/``: npm packages with ``npm install
--prefix`` (so nothing global changes), aider and kimi in virtual environments of their own
(their pins of ``typer`` conflict). kimi-cli needs Python 3.12 or newer: the first of
``python3.13``, ``python3.12`` on PATH, else a pyenv installation (``~/.pyenv/versions/3.12*``).
An install that fails raises with the CLI's name and the installer's last lines: never a skip.

    python tests/realcli/install.py [NAME ...]     # install (all by default), print where
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock


@dataclass(frozen=True)
class Pin:
    name: str  # the adapter's name
    package: str
    version: str
    binary: str
    via: str  # "npm" or "pip"


PINS: dict[str, Pin] = {
    p.name: p
    for p in (
        Pin("claude", "@anthropic-ai/claude-code", "2.1.332", "claude", "npm"),
        Pin("codex", "@openai/codex", "0.171.0", "codex", "npm"),
        Pin("gemini", "@google/gemini-cli", "0.61.0", "gemini", "npm"),
        Pin("copilot", "@github/copilot", "1.0.102", "copilot", "npm"),
        Pin("opencode", "opencode-ai", "1.18.33", "opencode", "npm"),
        Pin("aider", "aider-chat", "0.86.2", "aider", "pip"),
        Pin("kimi", "kimi-cli", "1.51.0", "kimi", "pip"),
    )
}


class InstallError(RuntimeError):
    pass


def cache_root() -> Path:
    named = os.environ.get("CONTROL_ROOM_CLI_CACHE")
    return Path(named) if named else Path.home() / ".cache" / "control-room" / "clis"


def folder(pin: Pin) -> Path:
    return cache_root() / f"{pin.name}-{pin.version}"


def bin_dir(pin: Pin) -> Path:
    return folder(pin) / ("node_modules/.bin" if pin.via == "npm" else "bin")


def python_for(pin: Pin) -> str:
    """The interpreter a pip-installed CLI's venv is made with."""
    if pin.name != "kimi":
        return sys.executable
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found and _works(found):
            return found
    home = Path.home() / ".pyenv" / "versions"
    for candidate in sorted(glob.glob(str(home / "3.1[2-9]*/bin/python3")), reverse=True):
        if _works(candidate):
            return candidate
    raise InstallError(
        "kimi: kimi-cli needs Python >= 3.12, and none was found (python3.12, python3.13, ~/.pyenv)"
    )


def _works(python: str) -> bool:
    done = subprocess.run(
        [python, "-c", "import sys; assert sys.version_info >= (3, 12)"], capture_output=True
    )
    return done.returncode == 0


def ensure(name: str) -> Path:
    """The folder holding ``name``'s executable, installing it first if needed."""
    pin = PINS[name]
    target = folder(pin)
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        done = target / ".installed"
        if not done.exists():
            if target.exists():
                shutil.rmtree(target)  # a half-finished install
            target.mkdir()
            _install(pin, target)
            exe = bin_dir(pin) / pin.binary
            if not exe.exists():
                raise InstallError(f"{name}: installed {pin.package}@{pin.version}, but {exe} is missing")
            done.write_text(f"{pin.package}=={pin.version}\n")
    return bin_dir(pin)


def _install(pin: Pin, target: Path) -> None:
    if pin.via == "npm":
        cmds = [["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error",
                 f"{pin.package}@{pin.version}"]]  # fmt: skip
    else:
        py = python_for(pin)
        cmds = [[py, "-m", "venv", str(target)],
                [str(target / "bin" / "python"), "-m", "pip", "install", "-q",
                 f"{pin.package}=={pin.version}"]]  # fmt: skip
    for cmd in cmds:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        if run.returncode != 0:
            tail = "\n".join((run.stderr or run.stdout).strip().splitlines()[-15:])
            raise InstallError(
                f"{pin.name}: `{' '.join(cmd[:3])} ...` failed (exit {run.returncode}):\n{tail}"
            )


if __name__ == "__main__":
    for n in sys.argv[1:] or list(PINS):
        print(n, ensure(n), flush=True)

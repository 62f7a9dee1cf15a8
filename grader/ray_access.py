"""How the Ray engine reaches Ray: only a cluster that requires a token, unless the instructor says
otherwise.

A Ray cluster runs whatever job its callers send, and before Ray 2.52 it asked no caller who they
were; from 2.52 it can require a token (`RAY_AUTH_MODE=token`, the token in `RAY_AUTH_TOKEN`,
`RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`), a default only for local clusters of later versions.
On a shared GPU box any student with a shell can reach a cluster the grader uses, and a job there runs
as the grader, with the class's seed and database at hand. So:

- A local cluster (no `--ray-address`) is started with token authentication on, whatever the Ray
  version's default, with a fresh token held in this process's environment only (Ray would otherwise
  write one to `~/.ray/auth_token`, readable by others under the usual umask), and its files in a
  folder of its own inside a private one (Ray makes its session folder writable by everyone).
  `address="local"` makes Ray start one even where `ray start` left a cluster's address in /tmp.
- Joining a cluster (`--ray-address`) needs its token in this environment, and is refused unless the
  cluster turns away a caller without one, which is checked from outside: a separate process with
  authentication off asks the cluster's GCS for its keys (`requires_token`). `--ray-insecure` skips all
  of this (and allows a Ray older than 2.52), for a cluster the instructor trusts the network of.
"""

from __future__ import annotations

import enum
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError

MIN_VERSION = (2, 52)
"""The first Ray with token authentication."""
PROBE_TIMEOUT_S = 60.0
INSECURE_HINT = "--ray-insecure joins it anyway (only where no one else can reach the cluster: SECURITY.md)"

PROBE = r"""
import sys
from ray._raylet import GcsClient
from ray.exceptions import AuthenticationError
try:
    GcsClient(address=sys.argv[1]).internal_kv_keys(b"", None, timeout=20)
except AuthenticationError:
    print("REFUSED")
except Exception as error:
    print("UNKNOWN " + f"{type(error).__name__}: {error}".splitlines()[0][:300])
else:
    print("OPEN")
"""
"""Run with authentication off: a cluster that answers it takes jobs from anyone."""


class Probe(enum.Enum):
    REFUSED = "refused"
    """The cluster turned away a caller without its token: it requires one."""
    OPEN = "open"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Checked:
    probe: Probe
    detail: str = ""


@dataclass(frozen=True)
class Connected:
    """The Ray this engine uses: the cluster it joined (`address`) or started (None), whether callers
    need a token there, and the private folder of a cluster it started (removed at `disconnect`)."""
    address: str | None
    token_required: bool
    folder: Path | None = None

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
        return where + (", token-authenticated" if self.token_required else ", NOT authenticated (--ray-insecure)")


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


def token_available(environ=os.environ, home: Path | None = None) -> bool:
    """Whether Ray would find a token here (its order: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token)."""
    if environ.get("RAY_AUTH_TOKEN", "").strip():
        return True
    path = environ.get("RAY_AUTH_TOKEN_PATH")
    home = home or (Path(environ["HOME"]) if environ.get("HOME") else Path.home())
    candidate = Path(path) if path else home / ".ray" / "auth_token"
    try:
        return bool(candidate.read_text().strip())
    except (OSError, UnicodeDecodeError):
        return False


def requires_token(gcs_address: str, environ=os.environ) -> Checked:
    """Ask the cluster's GCS for its keys from a process with authentication off and no token: a
    cluster that answers takes jobs from anyone who can reach it."""
    env = {k: v for k, v in environ.items() if not k.startswith("RAY_AUTH_")}
    with tempfile.TemporaryDirectory(prefix="grader-ray-probe-") as empty_home:
        env.update(RAY_AUTH_MODE="disabled", HOME=empty_home)
        try:
            done = subprocess.run([sys.executable, "-c", PROBE, gcs_address], env=env, capture_output=True,
                                  text=True, timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Checked(Probe.UNKNOWN, f"no answer within {PROBE_TIMEOUT_S:g} s")
    return classify(done.stdout, done.stderr)


def classify(stdout: str, stderr: str) -> Checked:
    lines = stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if last == "REFUSED":
        return Checked(Probe.REFUSED)
    if last == "OPEN":
        return Checked(Probe.OPEN)
    said = last.removeprefix("UNKNOWN ").strip() or (stderr.strip().splitlines() or ["the probe said nothing"])[-1]
    return Checked(Probe.UNKNOWN, said[:300])


def connect(ray, address: str | None, insecure: bool = False, environ=os.environ, **init) -> Connected:
    """Start a local Ray (`address` None) or join the cluster at `address`, as the module's docstring
    says; `init` goes to ray.init. Refused (UsageError) where the cluster would take jobs without a
    token, unless `insecure`."""
    too_old = version_tuple(ray.__version__) < MIN_VERSION
    if too_old and not insecure:
        raise UsageError(f"Ray {ray.__version__} cannot require a token of its callers (Ray 2.52 added that)",
                         hint="pip install -U 'ray>=2.52' (pip install -e '.[ray]'); " + INSECURE_HINT)
    folder = None
    if address is None:
        folder = Path(tempfile.mkdtemp(prefix="grader-ray-"))  # 0700: Ray's own folder inside is 0777
        if not insecure:
            _token_mode(environ)
            if not environ.get("RAY_AUTH_TOKEN", "").strip() and not environ.get("RAY_AUTH_TOKEN_PATH"):
                environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        target, init = "local", {**init, "_temp_dir": str(folder / "ray")}
    else:
        if not insecure:
            if environ.get("RAY_AUTH_MODE", "token").strip().lower() != "token":
                raise UsageError(f"RAY_AUTH_MODE={environ['RAY_AUTH_MODE']}: the grader joins a Ray cluster only "
                                 "with its token", hint="unset RAY_AUTH_MODE (or set it to token); " + INSECURE_HINT)
            if not token_available(environ):
                raise UsageError(f"joining the Ray cluster at {address} needs its token, and none is set here",
                                 hint="set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH, or write ~/.ray/auth_token) to the "
                                      "token the cluster was started with (`ray get-auth-token` on its head node); "
                                      "a cluster without one takes jobs from anyone: " + INSECURE_HINT)
            _token_mode(environ)
        target = address
    try:
        ray.init(address=target, **init)
    except Exception as error:
        _remove(folder)
        if _refused_token(ray, error):
            raise UsageError(f"the Ray cluster at {address} refused this token",
                             hint="set RAY_AUTH_TOKEN to the token the cluster was started with "
                                  "(`ray get-auth-token` on its head node)") from error
        raise
    connected = Connected(address, not insecure and not too_old, folder)
    if insecure:
        return connected
    checked = requires_token(ray.get_runtime_context().gcs_address, environ)
    if checked.probe is Probe.REFUSED:
        return connected
    disconnect(ray, connected)
    where = f"the Ray cluster at {address}" if address else "the local Ray the grader started"
    if checked.probe is Probe.OPEN:
        raise UsageError(f"{where} takes jobs without a token: anyone who can reach it could run code as the grader, "
                         "with the class's seed and database at hand",
                         hint="start it with RAY_AUTH_MODE=token (Ray 2.52 or later); " + INSECURE_HINT)
    raise UsageError(f"could not check that {where} requires a token: {checked.detail}", hint=INSECURE_HINT)


def disconnect(ray, connected: Connected | None) -> None:
    """Leave Ray; a cluster the grader started stops, and its folder goes."""
    if connected is None:
        return
    ray.shutdown()
    _remove(connected.folder)


def _refused_token(ray, error: BaseException) -> bool:
    """Ray's AuthenticationError, raised itself or as the cause of ray.init's ConnectionError."""
    refused = getattr(getattr(ray, "exceptions", None), "AuthenticationError", None)
    return refused is not None and any(isinstance(e, refused) for e in (error, error.__cause__) if e is not None)


def _token_mode(environ) -> None:
    """Token authentication for this process and what it starts (Ray reads the environment; its cached
    configuration is read again, as Ray itself does when it turns token mode on)."""
    environ["RAY_AUTH_MODE"] = "token"
    if environ is os.environ:
        try:
            from ray._raylet import Config
            Config.initialize("")
        except Exception:  # another Ray's internals: the probe after starting says whether it took
            pass


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)

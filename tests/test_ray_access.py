"""How the Ray engine reaches Ray (grader.ray_access), without starting Ray: a stand-in for the `ray`
module records what the grader asks of it. A cluster that takes jobs without a token is refused
unless --ray-insecure; joining needs a token; a local cluster is started in token mode with a fresh
token and a private folder. tests/test_engine.py starts a real local Ray and checks it refuses a
caller without the token."""

from __future__ import annotations

import os
import stat
import types

import pytest

from grader import ray_access
from grader.cli import DEFAULT_CHALLENGES
from grader.errors import UsageError
from test_cli import invoke


class FakeRay:
    """What grader.ray_access uses of the `ray` module."""

    class AuthenticationError(Exception):
        pass

    def __init__(self, version: str = "2.60.0", refuse_token: bool = False):
        self.__version__ = version
        self.exceptions = types.SimpleNamespace(AuthenticationError=FakeRay.AuthenticationError)
        self.inits, self.shutdowns, self.refuse_token = [], 0, refuse_token

    def init(self, address, **kwargs):
        if self.refuse_token:
            try:
                raise FakeRay.AuthenticationError("Authentication token is missing or incorrect")
            except FakeRay.AuthenticationError as error:
                raise ConnectionError("Failed to connect to Ray cluster") from error
        self.inits.append((address, kwargs))

    def get_runtime_context(self):
        return types.SimpleNamespace(gcs_address="10.0.0.9:6379")

    def shutdown(self):
        self.shutdowns += 1


@pytest.fixture
def probed(monkeypatch):
    """requires_token answers `answer[0]`, and records the addresses it was asked about."""
    asked, answer = [], [ray_access.Checked(ray_access.Probe.REFUSED)]

    def fake(address, environ=None):
        asked.append(address)
        return answer[0]

    monkeypatch.setattr(ray_access, "requires_token", fake)
    return asked, answer


def test_joining_a_cluster_without_authentication_is_refused_unless_insecure(probed, tmp_path):
    asked, answer = probed
    answer[0] = ray_access.Checked(ray_access.Probe.OPEN)
    ray, env = FakeRay(), {"RAY_AUTH_TOKEN": "t0ken"}
    with pytest.raises(UsageError, match="takes jobs without a token") as refused:
        ray_access.connect(ray, "10.0.0.9:6379", environ=env)
    assert "--ray-insecure" in refused.value.hint
    assert asked == ["10.0.0.9:6379"] and ray.shutdowns == 1, "it connected, asked, and left"
    assert env["RAY_AUTH_MODE"] == "token", "its token went with the connection"
    answer[0] = ray_access.Checked(ray_access.Probe.UNKNOWN, "no answer")
    with pytest.raises(UsageError, match="could not check .* requires a token: no answer"):
        ray_access.connect(FakeRay(), "10.0.0.9:6379", environ={"RAY_AUTH_TOKEN": "t0ken"})
    insecure = FakeRay()
    joined = ray_access.connect(insecure, "10.0.0.9:6379", insecure=True, environ={})
    assert insecure.inits == [("10.0.0.9:6379", {})] and not joined.token_required
    assert "NOT authenticated" in joined.describe() and len(asked) == 2, "--ray-insecure asks nothing"


def test_joining_needs_a_token_before_anything_is_sent(probed, tmp_path):
    asked, _ = probed
    ray = FakeRay()
    with pytest.raises(UsageError, match="needs its token, and none is set") as refused:
        ray_access.connect(ray, "10.0.0.9:6379", environ={"HOME": str(tmp_path)})
    assert "RAY_AUTH_TOKEN" in refused.value.hint and "--ray-insecure" in refused.value.hint
    with pytest.raises(UsageError, match="RAY_AUTH_MODE=disabled"):
        ray_access.connect(ray, "10.0.0.9:6379", environ={"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "t"})
    assert ray.inits == [] and asked == []
    with pytest.raises(UsageError, match="refused this token"):
        ray_access.connect(FakeRay(refuse_token=True), "10.0.0.9:6379", environ={"RAY_AUTH_TOKEN": "wrong"})


def test_a_token_is_found_where_ray_finds_it(tmp_path):
    assert not ray_access.token_available({}, home=tmp_path)
    assert ray_access.token_available({"RAY_AUTH_TOKEN": "x"}, home=tmp_path)
    (tmp_path / "t").write_text("x\n")
    assert ray_access.token_available({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "t")}, home=tmp_path)
    assert not ray_access.token_available({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "missing")}, home=tmp_path)
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("x")
    assert ray_access.token_available({}, home=tmp_path)


def test_a_local_cluster_starts_in_token_mode_with_a_fresh_token_in_a_private_folder(probed):
    asked, _ = probed
    ray, env = FakeRay(), {}
    started = ray_access.connect(ray, None, environ=env, num_cpus=2)
    try:
        (address, kwargs), = ray.inits
        assert address == "local", "never a cluster `ray start` left in /tmp (another user's)"
        assert env["RAY_AUTH_MODE"] == "token" and len(env["RAY_AUTH_TOKEN"]) == 64
        assert kwargs["num_cpus"] == 2 and kwargs["_temp_dir"] == str(started.folder / "ray")
        assert stat.S_IMODE(os.stat(started.folder).st_mode) == 0o700
        assert started.token_required and asked == ["10.0.0.9:6379"], "checked from outside like a joined one"
        assert "token-authenticated" in started.describe()
    finally:
        ray_access.disconnect(ray, started)
    assert not started.folder.exists() and ray.shutdowns == 1
    mine = {"RAY_AUTH_TOKEN": "the instructor's"}
    ray_access.disconnect(FakeRay(), ray_access.connect(FakeRay(), None, environ=mine))
    assert mine["RAY_AUTH_TOKEN"] == "the instructor's", "a token the instructor set is the one used"


def test_a_ray_without_token_authentication_is_refused_unless_insecure(probed):
    with pytest.raises(UsageError, match="Ray 2.9.3 cannot require a token") as refused:
        ray_access.connect(FakeRay("2.9.3"), None, environ={})
    assert "ray>=2.52" in refused.value.hint
    old = FakeRay("2.9.3")
    ray_access.disconnect(old, ray_access.connect(old, "10.0.0.9:6379", insecure=True, environ={}))
    assert old.inits


@pytest.mark.parametrize("stdout, stderr, probe", [
    ("REFUSED\n", "", ray_access.Probe.REFUSED), ("some log\nOPEN\n", "", ray_access.Probe.OPEN),
    ("UNKNOWN RpcError: unavailable\n", "", ray_access.Probe.UNKNOWN),
    ("", "Traceback ...\nImportError: cannot import name 'GcsClient'\n", ray_access.Probe.UNKNOWN)])
def test_the_probe_s_answer_is_read(stdout, stderr, probe):
    checked = ray_access.classify(stdout, stderr)
    assert checked.probe is probe
    if probe is ray_access.Probe.UNKNOWN:
        assert checked.detail in ("RpcError: unavailable", "ImportError: cannot import name 'GcsClient'")


def test_the_cli_refuses_to_join_without_a_token_before_starting_ray(tmp_path, monkeypatch):
    """`grader serve --engine ray --ray-address …` with no token: exit 2 before Ray is started or joined."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE", "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ray_access, "requires_token", lambda *a: pytest.fail("nothing may be asked"))
    result, _, err = invoke("serve", "--db", str(tmp_path / "c.sqlite3"), "--port", "0", "--backend", "emulator",
                            "--sandbox", "off", "--engine", "ray", "--ray-address", "10.0.0.9:6379",
                            "--challenge", "vector_add")
    assert result.exit_code == 2 and "needs its token" in " ".join(err.split()), err
    assert "--ray-insecure" in err
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "alice.cu").write_bytes((DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu").read_bytes())
    local, _, err = invoke("grade", str(folder), "--challenge", "vector_add", "--db", str(tmp_path / "c.sqlite3"),
                           "--backend", "emulator", "--sandbox", "off", "--ray-insecure")
    assert local.exit_code == 2 and "--ray-insecure is for --engine ray" in err

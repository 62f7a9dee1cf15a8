"""The README's commands are the contract: the ones it shows must exist and be what CI runs."""

from __future__ import annotations

import re
import shlex

from click.testing import CliRunner

from grader import cli

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def fenced_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_test_command():
    test_command = next(c for c in fenced_commands() if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_every_grader_command_in_the_readme_exists():
    mentioned = set(re.findall(r"`grader (\w+)", README)) | {
        part.split()[1] for c in fenced_commands() for part in c.split("&&") if part.strip().startswith("grader ")}
    assert mentioned >= {"submit", "run", "list", "show", "init"}
    for name in mentioned:
        assert name in cli.cli.commands, f"README mentions `grader {name}`, which does not exist"


def test_the_install_command_grades_a_file_that_exists():
    install = next(c for c in fenced_commands() if "grader submit" in c)
    submit = shlex.split(install.split("&&")[1])
    assert (ROOT / submit[-1]).is_file()
    result = CliRunner().invoke(cli.cli, [*submit[1:], "--help"])
    assert result.exit_code == 0


def test_documented_exit_codes_match_the_enum():
    from grader.exitcodes import ExitCode
    section = README.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {int(m) for m in re.findall(r"^\| (\d+) \|", section, re.M)}
    assert documented == {int(code) for code in ExitCode}


def test_local_links_in_the_readme_and_the_design_resolve_inside_the_repository():
    for document in (ROOT / "README.md", ROOT / "docs" / "DESIGN.md"):
        for target in re.findall(r"\]\(([^)#\s]+)\)", document.read_text()):
            assert not re.match(r"\w+://", target), f"{document.name} links outside the repository: {target}"
            resolved = (document.parent / target).resolve()
            assert ROOT in resolved.parents and resolved.exists(), f"{document.name}: broken link {target}"


def test_the_readme_points_at_the_design():
    assert "](docs/DESIGN.md)" in README


def _said(text: str) -> str:
    return " ".join(text.split())


def test_what_the_docs_say_of_a_file_several_challenges_match_is_what_happens():
    """README and --help said such a file falls back to matmul; it is refused, naming each --challenge."""
    from click.testing import CliRunner

    softmax = ROOT / "challenges" / "softmax" / "levels" / "1_three_passes.cu"
    result = CliRunner().invoke(cli.cli, ["run", str(softmax), "--backend", "emulator"])
    said = _said(result.output)
    assert result.exit_code == 2 and "--challenge reduction" in said and "--challenge softmax" in said
    assert "when several challenges have that signature the file is refused, exit 2" in _said(README)
    assert "none or several" not in README
    for command in ("run", "submit"):
        shown = _said(CliRunner().invoke(cli.cli, [command, "--help"]).output)
        assert "when several have it, the file is refused (exit 2)" in shown and "none or several" not in shown


def test_what_the_readme_says_of_a_refused_upload_is_the_exit_code_the_client_gives():
    import httpx
    import pytest

    from grader.classroom import client
    from grader.errors import GraderError

    said = _said(README)
    assert "(HTTP 429), the client exits 6" in said and "a file too large (HTTP 413), like any file the server will " \
                                                          "not take, exits 2" in said
    for status, code in ((429, 6), (413, 2)):
        answer = httpx.MockTransport(lambda request: httpx.Response(status, json={"error": "no"}))
        with pytest.raises(GraderError) as refused:
            client.Client(client.Login("http://class", "t"), transport=answer).submit("a.cu", b"x", None)
        assert int(refused.value.exit_code) == code

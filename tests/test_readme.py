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

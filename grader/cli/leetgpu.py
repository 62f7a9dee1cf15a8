"""The command line's side of LeetGPU's official challenges: which one a `run` or `submit` names (by
`--challenge`, or by the file's solve signature among the checkout's and ours), made once the backend is known."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from grader import source, spec
from grader.cli.common import Terminal
from grader.errors import UsageError


@dataclasses.dataclass(frozen=True)
class OfficialChoice:
    """An official challenge named on the command line; made (with PyTorch) once the backend is known."""

    root: Path
    slug: str
    ladder: Path | None = None

    def ladder_for(self, challenges_dir: Path | None) -> Path | None:
        """The ladder asked for, else the grader's challenge for the same problem."""
        from grader.leetgpu import official

        if self.ladder is not None or challenges_dir is None:
            return self.ladder
        return official.same_problem(challenges_dir, self.slug)

    def made(self, seed: int, backend_name: str, ladder: Path | None) -> spec.Challenge | str:
        """The challenge with its cases drawn from `seed` on the backend's device, or why it cannot be graded."""
        from grader.leetgpu import official

        try:
            return official.challenge(self.root, self.slug, seed, official.device_for(backend_name), ladder)
        except official.Unsupported as why:
            return why.message


def named_official(leetgpu_dir: Path | None, slug: str | None) -> OfficialChoice | None:
    """The official challenge `--challenge` names in the checkout, if a checkout is given and has it."""
    from grader import leetgpu

    if leetgpu_dir is None or not slug:
        return None
    root = leetgpu.checkout_root(leetgpu_dir)
    return OfficialChoice(root, slug) if leetgpu.find(root, slug) is not None else None


def official_for(terminal: Terminal, submitted: source.Source, known: list[spec.Challenge],
                  leetgpu_dir: Path) -> OfficialChoice | None:
    """With a checkout and no --challenge: the official challenge the file's solve signature names, among the
    official ones and the grader's own (`known`; an official one takes the place of ours for the same problem); None
    when it names one of ours only (chosen as without a checkout); several: a usage error naming them."""
    from grader import leetgpu, signature

    root = leetgpu.checkout_root(leetgpu_dir)
    officials = [o for o in leetgpu.catalogue(root) if leetgpu.mapped(o).unsupported is None]
    replaced = {o.slug for o in officials}
    ours = [c for c in known if c.leetgpu not in replaced]
    candidates = [signature.of(c) for c in ours] + [
        signature.Signature(o.slug, "solve", tuple(spec.canonical_type(t) for t in o.starter_types)) for o in officials]
    choice = signature.choose_signature(submitted.text, candidates)
    if choice.challenge in replaced:
        terminal.err.print(f"challenge: {choice.challenge} (LeetGPU's, from {root}; {choice.why}; "
                           "--challenge to choose another)", style="dim", highlight=False)
        return OfficialChoice(root, choice.challenge)
    if choice.matches and not choice.challenge:
        raise UsageError(f"{submitted.display_path}: {choice.why}",
                         hint="pass one of: " + ", ".join(f"--challenge {slug}" for slug in choice.matches))
    return None

"""One proposal reads its spec file once: propose_kernels (the real refine loop, the real
verification pool on the CPU backend, a scripted model) parses the spec and passes the Spec on
to the suite, the examples, every round's prompt and every candidate's folder. Opens of the spec
file are counted by a Python audit hook, which sees every open (builtins.open, io.open, os.open)
in every thread without replacing any function."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.assist.prompting import compact
from app.assist.refine.attempts import Attempt
from app.assist.refine.proposing import ProposeSettings, propose_kernels
from app.assist.tasks.suite import TASKS_DIR, load_heldout, load_suite
from app.spec.model import load_spec
from tests.assist.scripted import ADDS, MISSING_SEMICOLON, ScriptedModel, action_of

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"  # a dev task
HELD = TASKS_DIR / "add_i32" / "add_i32.toml"  # a held-out task

# real path of a watched file -> the names of the threads that opened it
_WATCHED: dict[str, list[str]] = {}
_hooked: list[bool] = []


def _on_audit(event: str, args: tuple[object, ...]) -> None:
    """Note an open of a watched file (an audit hook must never raise into the open)."""
    if event != "open" or not _WATCHED or isinstance(args[0], int):
        return
    try:
        real = os.path.realpath(os.fsdecode(args[0]))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return
    opens = _WATCHED.get(real)
    if opens is not None:
        opens.append(threading.current_thread().name)


@contextmanager
def opens_of(path: Path) -> Iterator[list[str]]:
    """The opens of `path` while the block runs (an audit hook stays for the process, so one
    is added once and watches only inside such a block)."""
    if not _hooked:
        sys.addaudithook(_on_audit)
        _hooked.append(True)
    opens = _WATCHED.setdefault(os.path.realpath(path), [])
    try:
        yield opens
    finally:
        _WATCHED.clear()


def _spec_copies(attempts: list[Attempt], name: str) -> list[bytes]:
    """The spec copied beside each attempt's candidate."""
    return [(Path(a.folder) / name).read_bytes() for a in attempts]


def test_a_proposal_reads_its_spec_once_through_every_round_prompt_and_candidate(
        tmp_path: Path) -> None:
    settings = ProposeSettings(chains=1, rounds=2, skills=True, examples=True, backend="cpu")
    model = ScriptedModel(lambda r: ADDS if action_of(r) == "fix_compile" else MISSING_SEMICOLON)
    with opens_of(ADD) as opens:
        proposal = propose_kernels(model, ADD, "", tmp_path / "run", settings)
    assert [a.status for a in proposal.attempts] == ["compile_error", "passed"]
    assert len(model.calls) == 2, "two rounds, each with a prompt carrying the spec"
    assert len(opens) == 1, f"the spec file was opened {len(opens)} times: {opens}"
    assert _spec_copies(proposal.attempts, ADD.name) == [ADD.read_bytes()] * 2
    prompt = model.calls[0][0].messages[-1]["content"]
    assert ADD.read_text() in prompt, "the prompt still carries the spec as written"


def test_a_held_out_task_is_known_as_held_out_from_the_spec_already_read(
        tmp_path: Path) -> None:
    assert load_heldout(known=load_spec(HELD)) == load_suite().heldout()
    settings = ProposeSettings(chains=2, rounds=1, verify=False, backend="cpu")
    model = ScriptedModel(lambda _request: ADDS)
    model.prompt_style = compact.STYLE  # the taught adapter's prompt carries the spec too
    with opens_of(HELD) as opens:
        proposal = propose_kernels(model, HELD, "", tmp_path / "run", settings)
    assert [a.status for a in proposal.attempts] == ["not_verified", "not_verified"]
    assert len(opens) == 1, f"the spec file was opened {len(opens)} times: {opens}"
    assert _spec_copies(proposal.attempts, HELD.name) == [HELD.read_bytes()] * 2
    assert compact.spec_core(HELD.read_text()) in model.calls[0][0].messages[-1]["content"]

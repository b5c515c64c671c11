"""Model-written kernels meet the verifier's newer rules through propose (real refine loop, real
verification pool on the CPU backend, a scripted model): every candidate runs on a fresh seed of
its own, so a kernel that carries the spec's seed inputs fails and is never kept as an example;
a kernel naming a host compiler's macro (__linux__) is refused as unverified, and not kept. The
data folder is the test session's, so kept examples are looked for by their source."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from app.assist.prompting.examples import Example, verified_examples
from app.assist.refine.proposing import Proposal, ProposeSettings, propose_kernels
from app.assist.tasks.suite import TASKS_DIR
from app.engine.verify.buffers import generate_inputs
from app.engine.verify.seeds import FRESH_FLOOR
from app.spec.cases import resolve
from app.spec.model import load_spec
from tests.assist.scripted import ADDS, ScriptedModel, Writer, action_of

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"
# Right only for inputs whose a[0] it recognises; elsewhere it subtracts.
MEMORIZER = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "    unsigned w = __float_as_uint(a[0]);\n"
             "    bool known = {known};\n"
             "    if (i < n) c[i] = known ? a[i] + b[i] : a[i] - b[i];\n}}\n")
# Right on a GPU (NVRTC defines no __linux__), wrong under a host compiler that does.
HOST_MACRO = ("    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "#ifdef __linux__\n"
              "    if (i < n) c[i] = a[i] - b[i];\n"
              "#else\n"
              "    if (i < n) c[i] = a[i] + b[i];\n"
              "#endif\n}\n")
FAILING_SEED = re.compile(r"First failing run: case \{[^}]*\}, seed (\d+): mismatch")


def memorizer() -> str:
    """The body of an add_f32 kernel that is right on the spec's own seeds only: it carries the
    bits of a[0] of every case and seed, drawn as the verifier draws them."""
    spec = load_spec(ADD)
    words = []
    for index, case in enumerate(spec.cases):
        for seed in range(spec.seeds):
            value = generate_inputs(spec, resolve(spec, case), seed, index)["a"].reshape(-1)[0]
            words.append(struct.unpack("<I", struct.pack("<f", float(value)))[0])
    return MEMORIZER.format(known=" || ".join(f"w == 0x{word:08x}u" for word in words))


def _source(example: Example) -> str:
    """The kernel source of a kept example."""
    return load_spec(example.path).source_path.read_text()


def _propose(write: Writer, tmp_path: Path, chains: int, rounds: int) -> Proposal:
    """Propose for add_f32 on the CPU backend, no skills or examples in the prompt."""
    settings = ProposeSettings(chains=chains, rounds=rounds, skills=False, examples=False,
                               backend="cpu")
    return propose_kernels(ScriptedModel(write), ADD, "", tmp_path / "run", settings)


def test_each_candidate_runs_its_own_fresh_seed_so_a_memorizer_fails_and_is_not_kept(
        tmp_path: Path) -> None:
    known = memorizer()
    proposal = _propose(lambda _request: known, tmp_path, chains=2, rounds=1)
    assert [a.status for a in proposal.attempts] == ["mismatch", "mismatch"]
    seeds = []
    for attempt in proposal.attempts:
        found = FAILING_SEED.search(attempt.feedback)
        assert found is not None, attempt.feedback
        seeds.append(int(found.group(1)))
    # The spec's seeds (0 and 1) all passed: what failed is a seed drawn for that candidate.
    assert all(seed >= FRESH_FLOOR for seed in seeds) and seeds[0] != seeds[1]
    assert proposal.passed is None and proposal.kept is None
    assert not any("__float_as_uint" in _source(e) for e in verified_examples())


def test_after_a_memorizer_only_the_kernel_that_passed_is_kept(tmp_path: Path) -> None:
    known = memorizer()
    proposal = _propose(lambda r: ADDS if action_of(r) == "fix_verify" else known, tmp_path,
                        chains=1, rounds=2)
    assert [a.status for a in proposal.attempts] == ["mismatch", "passed"]
    assert proposal.kept is not None and proposal.passed is proposal.attempts[1]
    kept = [e for e in verified_examples() if e.path.parent == proposal.kept]
    assert [_source(e) for e in kept] == [Path(proposal.attempts[1].folder, "add_f32.cu")
                                         .read_text()]
    assert not any("__float_as_uint" in _source(e) for e in verified_examples())


def test_a_candidate_naming_a_host_macro_is_unverified_and_not_kept(tmp_path: Path) -> None:
    proposal = _propose(lambda _request: HOST_MACRO, tmp_path, chains=1, rounds=2)
    # Unverified says nothing the model could fix: the chain ends there.
    (attempt,) = proposal.attempts
    assert attempt.status == "unverified" and "__linux__" in attempt.message
    assert proposal.passed is None and proposal.kept is None
    assert not any("__linux__" in _source(e) for e in verified_examples())

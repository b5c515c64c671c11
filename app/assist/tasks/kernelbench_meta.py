"""Asking a KernelBench problem what its Model is (kernelbench_probe), under the rules every
reference runs under: in the reference process, inside the sandbox. Where no sandbox can be had
the problem is not run at all and the import is refused (docs/isolation.md): a file from
elsewhere is code of unknown intent.

The problem file and a one-line reference that hands it to the probe go into a private folder
that the sandbox sees read-only; the answer comes back as the reference's one output.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from app.assist.tasks.kernelbench import Refused
from app.engine.verify.reference import Reference, ReferenceError
from app.isolation import sandbox

SHIM = '''"""Hands a problem beside this file to Kernel Studio's import probe."""
from pathlib import Path

from app.assist.tasks.kernelbench_probe import probe


def reference(request, problem):
    return probe(Path(__file__).with_name(Path(problem).name), request)
'''


# Seconds one problem's probe may take (the reference's own limit, if larger): a recurrent
# Model on the meta device runs step by step, and a deep bidirectional LSTM at the problem's
# sizes takes a minute there on a busy 2-core machine.
PROBE_SECONDS = 600.0


def _unusable() -> Refused | None:
    """Why no problem can be run here, if so."""
    usable, reason = sandbox.available()
    if usable:
        return None
    return Refused(f"learning the Model's shapes means running the problem, which happens only "
                   f"inside the sandbox, and none can be had here ({reason}): see "
                   "`kernel-studio doctor`")


def ask(source: str, request: dict[str, Any]) -> dict[str, Any]:
    """The probe's answer for the problem `source`; Refused when it cannot be asked."""
    found = ask_many([(source, request)])[0]
    if isinstance(found, Refused):
        raise found
    return found


def ask_many(problems: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any] | Refused]:
    """The probe's answer for each (source, request), from one sandboxed process while it
    lasts (starting Python and torch there is most of the cost); a problem that kills the
    process gets its Refused and the rest a fresh one."""
    refused = _unusable()
    if refused is not None:
        return [refused for _ in problems]
    folder = Path(tempfile.mkdtemp(prefix="kernelbench-import-"))
    try:
        for index, (source, _request) in enumerate(problems):
            (folder / f"problem_{index}.py").write_text(source, encoding="utf-8")
        (folder / "probe_ref.py").write_text(SHIM, encoding="utf-8")
        return _answers(folder, [request for _source, request in problems])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _answers(folder: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any] | Refused]:
    """Each request's answer, asked of the problems in `folder` in order."""
    found: list[dict[str, Any] | Refused] = []
    reference: Reference | None = None
    try:
        for index, request in enumerate(requests):
            if reference is None or not reference.usable:
                if reference is not None:
                    reference.close()
                reference = Reference(folder / "probe_ref.py", folder)
                reference.limit = max(reference.limit, PROBE_SECONDS)
            found.append(_answer(reference, request, f"problem_{index}.py"))
    finally:
        if reference is not None:
            reference.close()
    return found


def _answer(reference: Reference, request: dict[str, Any], problem: str
            ) -> dict[str, Any] | Refused:
    """One problem's answer, or Refused saying why it could not be had."""
    try:
        returned = reference(request=json.dumps(request), problem=problem)
    except ReferenceError as error:
        return Refused(f"the problem could not be run to learn its shapes: "
                       f"{_short(str(error))}")
    answer = returned.get("answer")
    if answer is None:
        return Refused("the problem could not be run to learn its shapes: no answer came back")
    return dict(json.loads(bytes(answer).decode()))


def _short(text: str, limit: int = 400) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."

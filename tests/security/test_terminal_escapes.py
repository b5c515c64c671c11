"""No escape sequence reaches the terminal from text the CLI did not write itself: a
`#pragma message` and a file name (compile), a reference's exception (verify, spec-check), audit
entries (audit show). Each runs the real CLI as a subprocess and looks at every byte it wrote."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.base.paths import ROOT
from app.base.plaintext import TerminalStream, terminal_text
from app.review import audit

VECTOR_ADD = ROOT / "resources" / "kernels" / "vector_add"
# ESC sequences (clear screen, set title, colour), an 8-bit CSI, a carriage return that would let
# "FAKE" overwrite the line, a backspace, a NUL and DEL.
HOSTILE = "clear \x1b[2J title \x1b]0;pwn\x07 csi \x9b31m cr \rFAKE bs \x08 nul \x00 del \x7f"
# Every control a terminal acts on: C0 but tab and newline, DEL, C1; and surrogate escapes
# (bytes that were not UTF-8, 0x9b among them, decoded with surrogateescape).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udcff]")


def run(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """kernel-studio in a new process; its exit code and stdout + stderr, decoded so that any
    byte that is not UTF-8 shows as a surrogate (and counts as raw)."""
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True,
                          timeout=300, cwd=ROOT, env={**os.environ, **env}, check=False)
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "surrogateescape")


def assert_no_raw_controls(output: str) -> None:
    """Nothing a terminal would act on, tab and newline aside."""
    found = sorted({hex(ord(c)) for c in RAW.findall(output)})
    assert not found, f"raw control characters {found} in:\n{output!r}"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A private audit log and key folder for the subprocesses."""
    return {"KERNEL_STUDIO_AUDIT_LOG": str(tmp_path / "audit" / "audit.jsonl"),
            "KERNEL_STUDIO_AUDIT_KEY": str(tmp_path / "audit")}


def test_compile_escapes_pragma_messages_and_file_names(tmp_path: Path,
                                                        env: dict[str, str]) -> None:
    """A kernel whose file name holds ESC and whose `#pragma message` holds every kind."""
    source = tmp_path / "k\x1b[31m\x9b.cu"
    source.write_text(f'#pragma message("{HOSTILE.replace(chr(0), "")}")\n'
                      'extern "C" __global__ void k(float* c) { c[0] = 1.0f; }\n')
    code, out = run("compile", str(source), env=env)
    assert code == 0 and "pragma message" in out, out
    assert_no_raw_controls(out)
    assert "\\x1b[2J" in out and "k\\x1b[31m" in out  # shown, as escapes
    code, out = run("compile", str(source), "--json", env=env)
    assert_no_raw_controls(out)
    assert "\\u001b[2J" in json.dumps(json.loads(out))  # valid JSON, its data intact


def raising_copy(folder: Path) -> Path:
    """vector_add whose reference raises an exception carrying HOSTILE; its spec's path."""
    shutil.copytree(VECTOR_ADD, folder)
    (folder / "vector_add_ref.py").write_text(
        f"def reference(a, b, n):\n    raise ValueError({HOSTILE!r})\n")
    return folder / "vector_add.toml"


def test_a_reference_exception_reaches_verify_and_spec_check_escaped(
        tmp_path: Path, env: dict[str, str]) -> None:
    spec = raising_copy(tmp_path / "vector_add")
    code, out = run("verify", str(spec), "--backend", "cpu", "--case", "n=7", env=env)
    assert code != 0 and "ValueError" in out, out
    assert_no_raw_controls(out)
    code, out = run("spec-check", str(spec), env=env)
    assert "ValueError" in out, out
    assert_no_raw_controls(out)
    code, out = run("verify", str(spec), "--backend", "cpu", "--case", "n=7", "--json", env=env)
    assert_no_raw_controls(out)
    verdict = json.JSONDecoder().raw_decode(out[out.index("{"):])[0]  # stderr follows stdout
    assert "ValueError" in verdict["message"]


def test_audit_show_and_verify_escape_entries_written_raw(tmp_path: Path,
                                                          env: dict[str, str]) -> None:
    """A hand-written (or older) log whose entries hold raw controls, as appends now refuse
    to store them: show and verify print them escaped."""
    log = Path(env["KERNEL_STUDIO_AUDIT_LOG"])
    log.parent.mkdir(parents=True)
    entry = {"seq": 0, "time": HOSTILE, "user": HOSTILE, "host": "h\x1b[8m", "action": HOSTILE,
             "subject": {}, "outcome": HOSTILE, "details": {}, "prev": audit.GENESIS,
             "key_id": "\x1b[2J", "signature": "x"}
    entry["hash"] = audit.entry_hash(entry)
    log.write_bytes(audit.canonical(entry) + b"\n")
    audit.head_path(log).write_text(json.dumps({"seq": 0, "hash": entry["hash"]}))
    code, out = run("audit", "show", str(log), env=env)
    assert code == 0 and "unknown key" in out, out
    assert_no_raw_controls(out)
    code, out = run("audit", "verify", str(log), env=env)
    assert code == 1
    assert_no_raw_controls(out)


def test_the_stream_escapes_what_json_leaves_and_keeps_json_valid() -> None:
    """json.dumps(ensure_ascii=False) leaves DEL and C1 raw; through the stream they become
    escapes JSON reads back as the same characters."""
    class Sink:
        """A stream that keeps what it is given."""

        text = ""

        def write(self, text: str) -> int:
            """Keep it."""
            self.text += text
            return len(text)

        def flush(self) -> None:
            """Nothing to flush."""

    sink = Sink()
    stream = TerminalStream(sink)  # type: ignore[arg-type]
    stream.write(json.dumps({"m": HOSTILE}, ensure_ascii=False))
    assert not RAW.findall(sink.text)
    assert json.loads(sink.text) == {"m": HOSTILE}
    assert terminal_text("a\tb\nc") == "a\tb\nc"


def test_a_traceback_quoting_hostile_text_is_escaped_too() -> None:
    # A bug's traceback may quote what a file held; it goes out through the same streams.
    code = ("import app.cli.commands.doctor as d\nfrom app.cli import entry as cli\n"
            f"def boom(args):\n    raise ValueError({HOSTILE!r})\n"
            "d.run = boom\nraise SystemExit(cli.main(['doctor']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120,
                          cwd=ROOT, check=False)
    output = done.stdout.decode("utf-8", "surrogateescape") + \
        done.stderr.decode("utf-8", "surrogateescape")
    assert done.returncode == 1 and "ValueError: clear" in output
    assert_no_raw_controls(output)

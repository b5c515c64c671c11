"""compute-sanitizer reports turned into findings. The memcheck text is what compute-sanitizer
printed on an H200 for the read_past_end fixture (host frames shortened); the racecheck text
follows the same layout for the shared_race fixture."""

from __future__ import annotations

from app.engine import sanitizer

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at read_past_end+0x1670 in read_past_end.cu:29
=========     by thread (14,15,0) in block (2,0,0)
=========     Access to 0x7f53c8a001dc is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f53c8a00000 of size 476 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: pycuda::function::launch_kernel(pycudaboost::python::tuple) [0x1d24f9]
=========         Host Frame: run in pycuda_backend.py:88
=========
========= ERROR SUMMARY: 70 errors
"""

RACECHECK = """========= COMPUTE-SANITIZER
========= Warning: Race reported between Write access at shared_race+0x2c0 in shared_race.cu:24
=========     and Read access at shared_race+0x2a0 in shared_race.cu:24 [1016 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)
"""


def test_memcheck_report_names_kind_kernel_and_source_line() -> None:
    findings = sanitizer.parse_report("memcheck", MEMCHECK)
    assert len(findings) == 1
    finding = findings[0]
    assert finding.kind == "Invalid __global__ read of size 4 bytes"
    assert (finding.kernel, finding.location) == ("read_past_end", "read_past_end.cu:29")
    assert "1 bytes after the nearest allocation" in finding.text
    assert "Host Frame" not in finding.text
    assert sanitizer.summary_line(MEMCHECK) == "ERROR SUMMARY: 70 errors"


def test_racecheck_report_names_the_racing_line() -> None:
    findings = sanitizer.parse_report("racecheck", RACECHECK)
    assert [(f.kernel, f.location) for f in findings] == [("shared_race", "shared_race.cu:24")]
    assert findings[0].kind.startswith("Warning: Race reported between Write access")
    assert "1016 hazards" in findings[0].text


def test_a_clean_run_has_no_findings() -> None:
    clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
    assert sanitizer.parse_report("memcheck", clean) == []
    assert sanitizer.summary_line(clean) == "ERROR SUMMARY: 0 errors"

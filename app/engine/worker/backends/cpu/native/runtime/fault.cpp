// Fault reporting and guarded buffers.
//
// Buffers live in "arenas": the buffer's pages with a large inaccessible (PROT_NONE) region on
// each side, so an access far outside any buffer faults instead of silently landing in some
// other memory of the worker. A fault (or an integer division by zero, trap or abort) prints
// one line naming the kernel, the block, the thread and, for a memory fault, where the address
// lies relative to the buffers; then the signal's previous disposition runs again, so the worker
// dies by that signal and the parent reports a crash with this line attached.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "runtime.h"

namespace ks {

const char* current_kernel = "";

namespace {
constexpr int kMaxArenas = 256;
constexpr size_t kAltStack = 64 * 1024;
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

struct Arena {
    uintptr_t low = 0, data = 0, data_end = 0, high = 0;
    size_t bytes = 0;
    int index = -1;
};

Arena arenas[kMaxArenas];
std::mutex arena_lock;
struct sigaction previous[NSIG];
std::once_flag installed;
thread_local Sm* t_sm = nullptr;
thread_local stack_t t_old_altstack;
thread_local void* t_altstack = nullptr;

// A tiny formatter that only writes into a fixed buffer (safe inside a signal handler).
struct Line {
    char text[640];
    size_t used = 0;
    void add(const char* s) {
        while (*s && used + 1 < sizeof text) text[used++] = *s++;
    }
    void number(unsigned long long v, int base = 10) {
        char digits[24];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[v % base];
            v /= base;
        } while (v && n < 24);
        if (base == 16) add("0x");
        while (n) {
            char c[2] = {digits[--n], 0};
            add(c);
        }
    }
    void triple(uint3 v) {
        add("(");
        number(v.x);
        add(", ");
        number(v.y);
        add(", ");
        number(v.z);
        add(")");
    }
};

const char* signal_text(int sig, const siginfo_t* si) {
    switch (sig) {
    case SIGSEGV: return "illegal memory access";
    case SIGBUS: return "misaligned or illegal memory access (SIGBUS)";
    case SIGFPE: return si->si_code == FPE_INTDIV ? "integer division by zero" : "arithmetic fault";
    case SIGILL: return "illegal instruction (a trap)";
    default: return "abort (a failed assert() or __trap())";
    }
}

// Nothing of a 64-bit process normally lives in the first 4 GiB; reserving that range keeps it
// so, and any pointer made from a 32-bit value (an index, a truncated address) faults.
constexpr uintptr_t kLowStart = 0x10000, kLowEnd = 1ull << 32;

void reserve_low_memory() {
#ifdef MAP_FIXED_NOREPLACE
    void* want = reinterpret_cast<void*>(kLowStart);
    void* got = mmap(want, kLowEnd - kLowStart, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got != MAP_FAILED && got != want) munmap(got, kLowEnd - kLowStart);  // an old kernel
#endif
}

void describe_address(Line& line, uintptr_t address) {
    if (address < kLowStart) {
        line.add(" (a null or near-null pointer)");
        return;
    }
    if (address < kLowEnd) {
        line.add(" (a 32-bit value used as a pointer: not inside any buffer)");
        return;
    }
    for (const Arena& a : arenas) {
        if (a.index < 0 || address < a.low || address >= a.high) continue;
        line.add(" (");
        if (address < a.data) {
            line.number(a.data - address);
            line.add(" bytes before the allocation of kernel parameter ");
        } else {
            line.number(address - a.data - a.bytes);
            line.add(" bytes past the end of the allocation of kernel parameter ");
        }
        line.number((unsigned long long)a.index);
        line.add(", beyond its guard zone)");
        return;
    }
    if (t_sm != nullptr && t_sm->stacks.contains_guard(address)) {
        line.add(" (stack overflow: a GPU thread used more than about 500 KiB of local memory)");
        return;
    }
    line.add(" (not inside any buffer of the launch)");
}

// The faulting instruction's address, where this platform's signal context gives it.
uintptr_t fault_pc(const void* context) {
    const ucontext_t* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__) && defined(__linux__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__) && defined(__linux__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

// " [pc kernel-<hash>.so+0x1a2b]" when `pc` lies in the kernel library's code: the parent maps
// it to the user's file and line (app/engine/worker/backends/cpu/lines.py).
void add_pc(Line& line, uintptr_t pc) {
    const CodeRange& code = kernel_code;
    if (pc == 0 || pc < code.low || pc >= code.high || code.name[0] == 0) return;
    line.add(" [pc ");
    line.add(code.name);
    line.add("+");
    line.number(pc - code.base, 16);
    line.add("]");
}

void on_fault(int sig, siginfo_t* si, void* context) {
    Sm* sm = t_sm;
    if (sm != nullptr && sm->current != nullptr) {
        Line line;
        line.add("kernel-studio cpu backend: ");
        line.add(signal_text(sig, si));
        if (sig == SIGSEGV || sig == SIGBUS) {
#if defined(__x86_64__)
            const ucontext_t* uc = static_cast<const ucontext_t*>(context);
            line.add((uc->uc_mcontext.gregs[REG_ERR] & 2) ? ": write to " : ": read from ");
#else
            (void)context;
            line.add(" at ");
#endif
            line.number((uintptr_t)si->si_addr, 16);
            describe_address(line, (uintptr_t)si->si_addr);
        }
        line.add(" in kernel ");
        line.add(current_kernel);
        line.add(", block ");
        line.triple(sm->info.block_idx);
        line.add(", thread ");
        line.triple(sm->current->info.thread_idx);
        add_pc(line, fault_pc(context));
        line.add("\n");
        ssize_t ignored = write(2, line.text, line.used);
        (void)ignored;
    }
    // Run the previous disposition: the faulting instruction repeats (abort raises again).
    sigaction(sig, &previous[sig], nullptr);
}
}  // namespace

void install_fault_handlers() {
    std::call_once(installed, [] {
        reserve_low_memory();
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_fault;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        for (int sig : kSignals) sigaction(sig, &action, &previous[sig]);
    });
}

void enter_cpu_thread(Sm* sm) {
    t_sm = sm;
    t_altstack = mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (t_altstack == MAP_FAILED) {
        t_altstack = nullptr;
        return;
    }
    stack_t alt;
    alt.ss_sp = t_altstack;
    alt.ss_size = kAltStack;
    alt.ss_flags = 0;
    sigaltstack(&alt, &t_old_altstack);
}

void leave_cpu_thread() {
    if (t_altstack != nullptr) {
        sigaltstack(&t_old_altstack, nullptr);
        munmap(t_altstack, kAltStack);
        t_altstack = nullptr;
    }
    t_sm = nullptr;
}

}  // namespace ks

// An arena for one buffer image of `bytes` bytes, with inaccessible regions of up to `guard`
// bytes on each side (smaller when the address space refuses). Returns the image's address.
KS_EXPORT void* ks_arena_map(unsigned long long bytes, int index, unsigned long long guard) {
    size_t pages = ((bytes + ks::kPage - 1) / ks::kPage) * ks::kPage;
    if (pages == 0) pages = ks::kPage;
    void* raw = MAP_FAILED;
    for (; guard >= 16 * ks::kPage; guard /= 2) {
        raw = mmap(nullptr, 2 * guard + pages, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw != MAP_FAILED) break;
    }
    if (raw == MAP_FAILED) return nullptr;
    char* data = static_cast<char*>(raw) + guard;
    if (mprotect(data, pages, PROT_READ | PROT_WRITE) != 0) {
        munmap(raw, 2 * guard + pages);
        return nullptr;
    }
    std::lock_guard<std::mutex> hold(ks::arena_lock);
    for (ks::Arena& a : ks::arenas) {
        if (a.index >= 0) continue;
        a.low = (uintptr_t)raw;
        a.data = (uintptr_t)data;
        a.data_end = a.data + pages;
        a.high = a.data_end + guard;
        a.bytes = bytes;
        a.index = index;
        break;
    }
    return data;
}

// Releases an arena made by ks_arena_map.
KS_EXPORT void ks_arena_unmap(void* data) {
    std::lock_guard<std::mutex> hold(ks::arena_lock);
    for (ks::Arena& a : ks::arenas) {
        if (a.index < 0 || a.data != (uintptr_t)data) continue;
        munmap((void*)a.low, a.high - a.low);
        a.index = -1;
        return;
    }
}

KS_EXPORT void ks_trap(const char* why) {
    ks::Line line;
    line.add("kernel-studio cpu backend: ");
    line.add(why);
    line.add(" in kernel ");
    line.add(ks::current_kernel);
    // The call's return address lies just after it, in the kernel's code: one byte back is
    // the call itself, on the line that called __trap().
    ks::add_pc(line, (uintptr_t)__builtin_return_address(0) - 1);
    ssize_t ignored = write(2, line.text, line.used);
    (void)ignored;
    ignored = write(2, "\n", 1);
    abort();
}

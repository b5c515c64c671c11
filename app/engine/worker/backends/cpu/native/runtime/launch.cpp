// A launch: check the configuration as a GPU would, then hand blocks to one Sm per CPU thread.
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "runtime.h"

namespace ks {

namespace {
// The GPU (sm_90, as emulated): at most 48 KiB of static shared memory a kernel, and 227 KiB a
// block in all, static and dynamic, once the kernel opts in past 48 KiB (the GPU backend opts a
// kernel in to its launch's size).
constexpr unsigned long long kStaticSharedLimit = 48 * 1024;
constexpr unsigned long long kSharedLimit = 227 * 1024;
// The kernel library's thread-local block holds its __shared__ variables plus the launcher's
// anchor byte and alignment padding: at most this much more.
constexpr size_t kTlsOverhead = 64;

struct TlsQuery {
    uintptr_t code = 0;
    unsigned char* data = nullptr;
    size_t size = 0;
};

bool contains(const dl_phdr_info* info, uintptr_t address) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_LOAD && address >= start && address < start + ph.p_memsz) return true;
    }
    return false;
}

int find_tls(dl_phdr_info* info, size_t, void* arg) {
    TlsQuery* query = static_cast<TlsQuery*>(arg);
    if (!contains(info, query->code)) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type == PT_TLS) query->size = info->dlpi_phdr[i].p_memsz;
    }
    query->data = static_cast<unsigned char*>(info->dlpi_tls_data);
    return 1;
}

// The extent of the loaded object holding `anchor` (the kernel library), for fault reports.
int find_code(dl_phdr_info* info, size_t, void* arg) {
    CodeRange* range = static_cast<CodeRange*>(arg);
    if (!contains(info, range->low)) return 0;
    uintptr_t low = UINTPTR_MAX, high = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
        uintptr_t start = info->dlpi_addr + ph.p_vaddr;
        if (start < low) low = start;
        if (start + ph.p_memsz > high) high = start + ph.p_memsz;
    }
    const char* path = info->dlpi_name != nullptr ? info->dlpi_name : "";
    const char* slash = strrchr(path, '/');
    snprintf(range->name, sizeof range->name, "%s", slash != nullptr ? slash + 1 : path);
    range->base = info->dlpi_addr;
    range->low = low;
    range->high = high;
    return 1;
}

// The kernel library's thread-local block (its __shared__ variables) for the calling thread.
TlsQuery kernel_tls(void* (*anchor)(void), bool allocate) {
    if (allocate) anchor();  // touching a thread_local allocates the block for this thread
    TlsQuery query;
    query.code = (uintptr_t)anchor;
    dl_iterate_phdr(find_tls, &query);
    return query;
}

std::string check_shape(const dim3& grid, const dim3& block, unsigned long long shared,
                        size_t static_shared) {
    char text[256];
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
        return "invalid configuration: a grid or block dimension is 0";
    }
    if (threads > kMaxThreadsPerBlock || block.x > 1024 || block.y > 1024 || block.z > 64) {
        snprintf(text, sizeof text, "invalid configuration: block (%u, %u, %u) exceeds the GPU "
                 "limits (1024 threads; x, y <= 1024; z <= 64)", block.x, block.y, block.z);
        return text;
    }
    if (grid.x > 2147483647u || grid.y > 65535u || grid.z > 65535u) {
        snprintf(text, sizeof text, "invalid configuration: grid (%u, %u, %u) exceeds the GPU "
                 "limits (x < 2^31; y, z <= 65535)", grid.x, grid.y, grid.z);
        return text;
    }
    if (static_shared > kStaticSharedLimit) {
        snprintf(text, sizeof text, "too much shared memory: about %zu bytes static exceed the "
                 "%llu a kernel may declare (more must be dynamic: extern __shared__ and "
                 "shared_bytes)", static_shared, kStaticSharedLimit);
        return text;
    }
    if (shared + static_shared > kSharedLimit) {
        snprintf(text, sizeof text, "too much shared memory: %llu bytes dynamic + about %zu "
                 "static exceed the %llu a block may have (lower shared_bytes in the spec)",
                 shared, static_shared, kSharedLimit);
        return text;
    }
    return "";
}

// The blocks of a launch, shared by its CPU threads.
struct Work {
    const LaunchShape& shape;
    void* (*anchor)(void);
    unsigned long long total;
    std::atomic<unsigned long long> next{0};
    std::atomic<bool> failed{false};
    std::mutex lock;
    std::string error;
    int code = 1;

    Work(const LaunchShape& s, void* (*a)(void), unsigned long long t)
        : shape(s), anchor(a), total(t) {}

    void fail(const std::string& message, int why = 1) {
        std::lock_guard<std::mutex> hold(lock);
        if (!failed.exchange(true)) {
            error = message;
            code = why;
        }
    }

    void run() {
        Sm sm(shape);
        enter_cpu_thread(&sm);
        TlsQuery tls = kernel_tls(anchor, true);
        sm.tls_block = tls.data;
        sm.tls_size = tls.data != nullptr ? tls.size : 0;
        std::string message;
        while (!failed.load(std::memory_order_relaxed)) {
            unsigned long long b = next.fetch_add(1);
            if (b >= total) break;
            if (!sm.run_block(b, message)) fail(message, sm.stop_code == 3 ? 3 : 1);
        }
        leave_cpu_thread();
    }
};

void copy_error(const std::string& message, char* error, unsigned long long size) {
    if (error == nullptr || size == 0) return;
    snprintf(error, size, "%s", message.c_str());
}
}  // namespace

CodeRange kernel_code;

void find_kernel_code(void* (*anchor)(void)) {
    CodeRange range;
    range.low = (uintptr_t)anchor;
    if (dl_iterate_phdr(find_code, &range) == 0) range = CodeRange();
    kernel_code = range;
}

}  // namespace ks

// Runs a launch to completion. Returns 0, 1 for a failure of the kernel (deadlock, misaligned
// address), 2 for a configuration the GPU would refuse or 3 for a construct the emulation
// refused while running (ks_stop); the message goes to `error`.
// `single_kernel` says the library holds one kernel, so that all of its static shared memory
// is this kernel's and counts against the limit (with several, no static share is known).
KS_EXPORT int ks_launch(void (*invoke)(void**), void** args, const unsigned int* grid,
                        const unsigned int* block, unsigned long long shared_bytes, int threads,
                        void* (*tls_anchor)(void), int single_kernel, const char* name,
                        char* error, unsigned long long error_size) {
    ks::LaunchShape shape;
    shape.grid = dim3(grid[0], grid[1], grid[2]);
    shape.block = dim3(block[0], block[1], block[2]);
    shape.shared_bytes = shared_bytes;
    shape.invoke = invoke;
    shape.args = args;
    shape.name = name;
    ks::TlsQuery tls = ks::kernel_tls(tls_anchor, false);
    size_t static_shared = single_kernel && tls.size > ks::kTlsOverhead
                               ? tls.size - ks::kTlsOverhead : 0;
    std::string problem = ks::check_shape(shape.grid, shape.block, shared_bytes, static_shared);
    if (!problem.empty()) {
        ks::copy_error(problem, error, error_size);
        return 2;
    }
    ks::install_fault_handlers();
    ks::find_kernel_code(tls_anchor);
    ks::current_kernel = name;
    unsigned long long total = (unsigned long long)shape.grid.x * shape.grid.y * shape.grid.z;
    ks::Work work(shape, tls_anchor, total);
    unsigned long long wanted = threads < 1 ? 1 : (unsigned long long)threads;
    unsigned helpers = (unsigned)((wanted < total ? wanted : total) - 1);
    std::vector<std::thread> pool;
    try {
        for (unsigned i = 0; i < helpers; ++i) pool.emplace_back([&work] { work.run(); });
    } catch (const std::exception& e) {
        work.fail(std::string("could not start CPU threads: ") + e.what());
    }
    work.run();
    for (std::thread& t : pool) t.join();
    fflush(stdout);
    if (work.failed) {
        ks::copy_error(work.error, error, error_size);
        return work.code;
    }
    return 0;
}

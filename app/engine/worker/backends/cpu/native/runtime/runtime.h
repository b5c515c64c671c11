// Internal declarations of the CPU emulation runtime (not seen by kernels).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "../emu_abi.h"

#if !defined(__x86_64__) || defined(KS_USE_UCONTEXT)
#define KS_UCONTEXT 1
#include <ucontext.h>
#endif

namespace ks {

constexpr size_t kPage = 4096;
// A stack slot: [header page: owner pointer][guard page][stack ... top].
constexpr size_t kStackSize = KS_STACK_SIZE;
constexpr size_t kMaxThreadsPerBlock = 1024;

struct Sm;

enum class State : uint8_t { New, Ready, Running, Barrier, Warp, Done, Stopped };

// One GPU thread. `info` comes first: kernels read it through the stack's owner pointer.
struct Fiber {
    ks_thread_info info;
    Sm* sm = nullptr;
    unsigned linear = 0;
    State state = State::New;
    char* stack = nullptr;  // base of the stack slot (aligned to kStackSize)
#ifdef KS_UCONTEXT
    ucontext_t context;
#else
    void* sp = nullptr;
#endif
    // The pending warp operation (or barrier predicate) and its result.
    int op = 0;
    unsigned mask = 0;
    unsigned long long value = 0, result = 0;
    int b = 0, width = 32;
    int predicate = 0;
};

struct Warp {
    unsigned first = 0;     // linear index of lane 0
    uint32_t alive = 0;     // lanes that have not exited
    uint32_t waiting = 0;   // lanes blocked in a warp operation (other than __activemask)
    uint32_t at_activemask = 0;
    int runnable = 0;       // lanes that are new, ready or running
};

// Stack slots of one CPU thread, reused from block to block and launch to launch.
class StackPool {
public:
    StackPool();
    ~StackPool();
    char* take();
    void give(char* slot) { free_.push_back(slot); }
    bool contains_guard(uintptr_t address) const;

private:
    char* take_fresh();
    char* base_ = nullptr;
    size_t used_ = 0;
    std::vector<char*> free_;
};

// A streaming multiprocessor: runs the blocks given to it, one at a time, on one CPU thread.
struct LaunchShape {
    dim3 grid, block;
    size_t shared_bytes = 0;
    void (*invoke)(void**) = nullptr;
    void** args = nullptr;
    const char* name = "";
};

struct Sm {
    explicit Sm(const LaunchShape& shape);
    bool run_block(unsigned long long linear_block, std::string& error);

    // Called from fibers.
    int barrier(Fiber* self, int op, int predicate);
    unsigned long long warp_op(Fiber* self, int op, unsigned mask, unsigned long long value,
                               int b, int width);
    void yield(Fiber* self);
    void suspend(Fiber* self);
    Fiber* finish(Fiber* done);
    [[noreturn]] void stop(Fiber* self, int code, const std::string& message);

    const LaunchShape& shape;
    ks_block_info info{};
    std::vector<Fiber> fibers;
    std::vector<Warp> warps;
    std::vector<unsigned> ready;
    size_t head = 0;
    unsigned alive = 0, at_barrier = 0, barrier_count = 0;
    int barrier_result = 0;
    Fiber* current = nullptr;
    StackPool stacks;
    std::vector<unsigned char> dynamic_shared;
    unsigned char* tls_block = nullptr;
    size_t tls_size = 0;
    // Set when a thread ends the launch (ks_stop): 1 a fault the GPU reports too (a misaligned
    // address), 3 a construct the emulation cannot run as the GPU does (refused).
    int stop_code = 0;
    std::string stop_message;
#ifdef KS_UCONTEXT
    ucontext_t scheduler;
#else
    void* scheduler_sp = nullptr;
#endif

private:
    void start_block(unsigned long long linear_block);
    Fiber* resume(Fiber* fiber);
    void settle(Fiber* fiber);
    void make_ready(Fiber* fiber);
    void release_barrier_if_complete();
    void try_complete(Warp& warp, unsigned lane);
    void complete_all(Warp& warp);
    void complete_group(Warp& warp, uint32_t group, bool activemask);
    std::string deadlock_report() const;
};

// Context switching.
void switch_to(Fiber* from_fiber, Sm* sm);           // fiber -> scheduler
void switch_from_scheduler(Sm* sm, Fiber* fiber);     // scheduler -> fiber
void prepare_context(Fiber* fiber);                   // a new fiber starts at fiber_main
// The fiber that owns a stack slot: the slot's first word.
inline Fiber*& owner_of(char* slot) { return *reinterpret_cast<Fiber**>(slot); }
// The fiber now owns fiber->stack. Inline: it runs once per GPU thread when threads take over
// a stack one after another (Sm::finish).
inline void adopt_stack(Fiber* fiber) { owner_of(fiber->stack) = fiber; }
[[noreturn]] void fiber_main();

// Results of warp operations, given the pending operations of a group of lanes.
unsigned long long warp_result(const Fiber* lanes, unsigned lane, uint32_t group);

// Fault reporting (fault.cpp).
void install_fault_handlers();
void enter_cpu_thread(Sm* sm);   // per CPU thread: alternate signal stack, current Sm
void leave_cpu_thread();
extern const char* current_kernel;
// Where the kernel library's code lies, so a fault can say at which offset of which library
// file it happened (the parent maps that to the user's file and line with the debug info).
struct CodeRange {
    uintptr_t base = 0, low = 0, high = 0;
    char name[160] = {0};
};
extern CodeRange kernel_code;
void find_kernel_code(void* (*anchor)(void));
// Whether the threads of each block run in descending order (ks_set_descending).
extern bool descending;

}  // namespace ks

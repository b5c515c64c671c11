// Fiber stacks and context switches.
//
// On x86-64 a switch saves the callee-saved registers and the SSE/x87 control words on the
// current stack and swaps stack pointers (a few nanoseconds); elsewhere it falls back to
// ucontext (portable, but each switch costs a system call). Stacks are reserved in one slab per
// CPU thread, aligned to their size, each with a guard page below it so that a stack overflow
// faults instead of corrupting the neighbouring fiber.
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mutex>

#include "runtime.h"

#ifndef KS_UCONTEXT
// void ks_switch_stack(void** save_sp, void* new_sp)
asm(R"(
    .text
    .p2align 4
    .globl ks_switch_stack
    .hidden ks_switch_stack
    .type ks_switch_stack, @function
ks_switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ks_switch_stack, .-ks_switch_stack
)");
extern "C" __attribute__((visibility("hidden"))) void ks_switch_stack(void** save_sp, void* new_sp);
#endif

namespace ks {

namespace {
constexpr size_t kSlots = kMaxThreadsPerBlock + 1;
}  // namespace

// Slabs outlive launches: a CPU thread of the next launch takes a spare one instead of
// reserving (and faulting in) fresh stacks.
// Each slab remembers how many of its slots are mapped already.
std::mutex spare_lock;
std::vector<std::pair<char*, size_t>> spare_slabs;

StackPool::StackPool() {
    std::lock_guard<std::mutex> hold(spare_lock);
    if (!spare_slabs.empty()) {
        base_ = spare_slabs.back().first;
        used_ = spare_slabs.back().second;
        spare_slabs.pop_back();
        for (size_t i = used_; i-- > 0;) free_.push_back(base_ + i * kStackSize);
        return;
    }
    size_t reserved = kStackSize * (kSlots + 1);
    void* raw = mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (raw == MAP_FAILED) {
        ks_trap("cannot reserve address space for fiber stacks (out of memory)");
    }
    uintptr_t aligned = ((uintptr_t)raw + kStackSize - 1) & ~(uintptr_t)(kStackSize - 1);
    base_ = reinterpret_cast<char*>(aligned);
    free_.reserve(kSlots);
}

StackPool::~StackPool() {
    // Fibers abandoned by a failed launch never run again, so every slot is free now.
    std::lock_guard<std::mutex> hold(spare_lock);
    spare_slabs.emplace_back(base_, used_);
}

char* StackPool::take() {
    if (!free_.empty()) {
        char* slot = free_.back();
        free_.pop_back();
        return slot;
    }
    return take_fresh();
}

char* StackPool::take_fresh() {
    if (used_ == kSlots) {
        abort();  // more live fibers than threads in a block: cannot happen
    }
    char* slot = base_ + used_ * kStackSize;
    ++used_;
    if (mprotect(slot, kPage, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(slot + 2 * kPage, kStackSize - 2 * kPage, PROT_READ | PROT_WRITE) != 0) {
        ks_trap("cannot map a fiber stack (out of memory, or too many memory mappings)");
    }
    return slot;
}

bool StackPool::contains_guard(uintptr_t address) const {
    uintptr_t base = (uintptr_t)base_;
    if (address < base || address >= base + used_ * kStackSize) return false;
    uintptr_t offset = (address - base) % kStackSize;
    return offset >= kPage && offset < 2 * kPage;
}

void fiber_main() {
    Fiber* self = reinterpret_cast<Fiber*>(const_cast<ks_thread_info*>(ks_self()));
    Sm* sm = self->sm;
    for (;;) {
        sm->shape.invoke(sm->shape.args);
        Fiber* next = sm->finish(self);
        if (next == nullptr) break;
        self = next;
    }
    // The scheduler reads the state after the switch; make sure the store is not dropped.
    __asm__ __volatile__("" : : "r"(self) : "memory");
    switch_to(self, sm);
    abort();  // a finished fiber is never resumed
}

#ifdef KS_UCONTEXT
void prepare_context(Fiber* fiber) {
    owner_of(fiber->stack) = fiber;
    getcontext(&fiber->context);
    fiber->context.uc_stack.ss_sp = fiber->stack + 2 * kPage;
    fiber->context.uc_stack.ss_size = kStackSize - 2 * kPage;
    fiber->context.uc_link = nullptr;
    makecontext(&fiber->context, (void (*)())fiber_main, 0);
}

void switch_to(Fiber* from_fiber, Sm* sm) { swapcontext(&from_fiber->context, &sm->scheduler); }

void switch_from_scheduler(Sm* sm, Fiber* fiber) { swapcontext(&sm->scheduler, &fiber->context); }
#else
void prepare_context(Fiber* fiber) {
    owner_of(fiber->stack) = fiber;
    uintptr_t* sp = reinterpret_cast<uintptr_t*>(fiber->stack + kStackSize);
    *--sp = 0;                                   // fiber_main's (never used) return address
    *--sp = (uintptr_t)&fiber_main;              // where the first switch "returns" to
    for (int i = 0; i < 6; ++i) *--sp = 0;       // rbp rbx r12 r13 r14 r15
    *--sp = 0x0000037f00001f80ull;               // MXCSR and x87 control word defaults
    fiber->sp = sp;
}

void switch_to(Fiber* from_fiber, Sm* sm) { ks_switch_stack(&from_fiber->sp, sm->scheduler_sp); }

void switch_from_scheduler(Sm* sm, Fiber* fiber) { ks_switch_stack(&sm->scheduler_sp, fiber->sp); }
#endif

}  // namespace ks

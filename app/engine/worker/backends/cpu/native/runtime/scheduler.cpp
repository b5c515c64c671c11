// The block scheduler: the threads of a block are fibers that run one at a time on a CPU
// thread and give way only at synchronisation points.
//
// Ready fibers run in ascending thread order, each until it reaches __syncthreads(), a warp
// operation, or its end. So between two barriers every thread runs to the next barrier before a
// higher-numbered thread starts: a missing barrier shows as a stale or too-fresh shared-memory
// value on every run, not only on the unlucky ones. A launch may ask for descending order
// (ks_set_descending): a race whose writer comes first in ascending order (thread 0 fills a
// shared value that the others read without a barrier) shows there instead.
// - A barrier opens when every thread that has not exited is waiting at one.
// - A warp operation completes when every live lane of its mask is waiting at one; the values
//   of the group are exchanged and each lane leaves with its own result.
// - __activemask() completes when no lane of the warp can run any more: the lanes waiting at
//   it are the ones that are "converged" there.
// - If nothing can run and threads remain, the block is deadlocked: the launch fails with a
//   description instead of hanging.
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

namespace ks {

bool descending = false;

namespace {
Fiber* current_fiber() { return reinterpret_cast<Fiber*>(const_cast<ks_thread_info*>(ks_self())); }

uint32_t lanes_present(unsigned first, unsigned threads) {
    unsigned count = threads - first < 32 ? threads - first : 32;
    return count == 32 ? 0xffffffffu : (1u << count) - 1u;
}

std::string uint3_text(uint3 v) {
    char text[64];
    snprintf(text, sizeof text, "(%u, %u, %u)", v.x, v.y, v.z);
    return text;
}
}  // namespace

Sm::Sm(const LaunchShape& launch) : shape(launch) {
    unsigned n = shape.block.x * shape.block.y * shape.block.z;
    fibers.resize(n);
    warps.resize((n + 31) / 32);
    ready.reserve(2 * n);
    dynamic_shared.resize(shape.shared_bytes + 256);
    uintptr_t raw = (uintptr_t)dynamic_shared.data();
    info.dynamic_shared = reinterpret_cast<unsigned char*>((raw + 255) & ~(uintptr_t)255);
    info.block_dim = shape.block;
    info.grid_dim = shape.grid;
    for (unsigned i = 0; i < n; ++i) {
        Fiber& f = fibers[i];
        f.sm = this;
        f.linear = i;
        f.info.thread_idx = uint3{i % shape.block.x, (i / shape.block.x) % shape.block.y,
                                  i / (shape.block.x * shape.block.y)};
        f.info.lane = i % 32;
        f.info.block = &info;
    }
}

void Sm::start_block(unsigned long long b) {
    unsigned long long gx = shape.grid.x, gy = shape.grid.y;
    info.block_idx = uint3{(unsigned)(b % gx), (unsigned)((b / gx) % gy), (unsigned)(b / (gx * gy))};
    // Shared memory starts as 0xFF bytes (NaN in every float type), never as the previous
    // block's values: a read of shared memory that no thread wrote shows up in the output.
    memset(info.dynamic_shared, 0xff, shape.shared_bytes);
    if (tls_block != nullptr) memset(tls_block, 0xff, tls_size);
    unsigned n = (unsigned)fibers.size();
    for (Fiber& f : fibers) {
        f.state = State::New;
        f.stack = nullptr;
    }
    for (size_t w = 0; w < warps.size(); ++w) {
        Warp& warp = warps[w];
        warp.first = (unsigned)(32 * w);
        warp.alive = lanes_present(warp.first, n);
        warp.waiting = warp.at_activemask = 0;
        warp.runnable = __builtin_popcount(warp.alive);
    }
    ready.clear();
    head = 0;
    for (unsigned i = 0; i < n; ++i) ready.push_back(descending ? n - 1 - i : i);
    alive = n;
    at_barrier = barrier_count = 0;
}

bool Sm::run_block(unsigned long long b, std::string& error) {
    start_block(b);
    for (;;) {
        if (head == ready.size()) {
            ready.clear();
            head = 0;
            if (alive == 0) return true;
            error = deadlock_report();
            for (Fiber& f : fibers) {  // abandoned fibers never run again
                if (f.stack != nullptr) stacks.give(f.stack);
            }
            return false;
        }
        settle(resume(&fibers[ready[head++]]));
        if (stop_code != 0) {  // a thread ended the launch: the others never run again
            error = stop_message;
            for (Fiber& f : fibers) {
                if (f.stack != nullptr) stacks.give(f.stack);
                f.stack = nullptr;
            }
            ready.clear();
            head = 0;
            return false;
        }
        if (head >= 4096 && 2 * head >= ready.size()) {  // drop the consumed part of the queue
            ready.erase(ready.begin(), ready.begin() + (long)head);
            head = 0;
        }
    }
}

// Runs a fiber until it gives way; returns the fiber that switched back, which differs when
// the stack was handed on to newly started threads (see finish).
Fiber* Sm::resume(Fiber* fiber) {
    if (fiber->state == State::New) {
        fiber->stack = stacks.take();
        prepare_context(fiber);
    }
    fiber->state = State::Running;
    current = fiber;
    switch_from_scheduler(this, fiber);
    Fiber* back = current;
    current = nullptr;
    return back;
}

// Called on the fiber's own stack when its thread returns from the kernel: the bookkeeping of
// the exit, then, when the next thread in line has not started yet, that thread takes over this
// stack directly. Threads that never wait (most elementwise kernels) thus run one after another
// without a single context switch. Returns the thread to run next here, or null.
Fiber* Sm::finish(Fiber* done) {
    done->state = State::Done;
    Warp& warp = warps[done->linear / 32];
    --alive;
    warp.alive &= ~(1u << (done->linear % 32));
    --warp.runnable;
    // Both calls do nothing unless some thread waits at a barrier or a warp operation: tested
    // here, the common exit (an elementwise kernel's every thread) makes neither call.
    if (at_barrier != 0) release_barrier_if_complete();
    if ((warp.waiting | warp.at_activemask) != 0) complete_all(warp);
    if (head == ready.size() || fibers[ready[head]].state != State::New) return nullptr;
    Fiber* next = &fibers[ready[head++]];
    next->stack = done->stack;
    done->stack = nullptr;
    adopt_stack(next);
    next->state = State::Running;
    current = next;
    return next;
}

// Ends the launch from a running thread: the message names the block and thread, and the
// scheduler abandons the block (see run_block). Never returns to the thread.
void Sm::stop(Fiber* self, int code, const std::string& message) {
    stop_message = message + " in kernel " + shape.name + ", block " + uint3_text(info.block_idx) +
                   ", thread " + uint3_text(self->info.thread_idx);
    stop_code = code;
    self->state = State::Stopped;
    current = self;
    switch_to(self, this);
    abort();  // a stopped fiber is never resumed
}

// Bookkeeping after a fiber gave way: why it stopped decides what may run next.
void Sm::settle(Fiber* fiber) {
    Warp& warp = warps[fiber->linear / 32];
    unsigned lane = fiber->linear % 32;
    uint32_t bit = 1u << lane;
    switch (fiber->state) {
    case State::Done:  // the exit was settled by finish(); only the stack remains
        stacks.give(fiber->stack);
        fiber->stack = nullptr;
        break;
    case State::Barrier:
        --warp.runnable;
        ++at_barrier;
        release_barrier_if_complete();
        break;
    case State::Warp:
        --warp.runnable;
        if (fiber->op == KS_ACTIVEMASK) {
            warp.at_activemask |= bit;
        } else {
            warp.waiting |= bit;
            try_complete(warp, lane);
        }
        break;
    case State::Ready:  // yielded
        ready.push_back(fiber->linear);
        break;
    default:
        break;
    }
    if (warp.runnable == 0 && warp.at_activemask != 0) {
        complete_group(warp, warp.at_activemask, true);
    }
}

void Sm::make_ready(Fiber* fiber) {
    fiber->state = State::Ready;
    ready.push_back(fiber->linear);
    ++warps[fiber->linear / 32].runnable;
}

void Sm::release_barrier_if_complete() {
    if (at_barrier == 0 || at_barrier != alive) return;
    unsigned participants = at_barrier, count = barrier_count;
    at_barrier = barrier_count = 0;
    for (size_t k = 0; k < fibers.size(); ++k) {
        Fiber& f = fibers[descending ? fibers.size() - 1 - k : k];
        if (f.state != State::Barrier) continue;
        f.result = f.op == KS_BAR_COUNT ? count
                   : f.op == KS_BAR_AND ? (count == participants)
                   : f.op == KS_BAR_OR  ? (count > 0) : 0;
        make_ready(&f);
    }
}

void Sm::try_complete(Warp& warp, unsigned lane) {
    uint32_t group = fibers[warp.first + lane].mask & warp.alive;
    if ((group & ~warp.waiting) == 0) complete_group(warp, group, false);
}

// After a lane exits, groups that were waiting only for it may be complete.
void Sm::complete_all(Warp& warp) {
    uint32_t pending = warp.waiting;
    while (pending != 0) {
        unsigned lane = (unsigned)__builtin_ctz(pending);
        pending &= pending - 1;
        if (warp.waiting & (1u << lane)) try_complete(warp, lane);
    }
    if (warp.runnable == 0 && warp.at_activemask != 0) {
        complete_group(warp, warp.at_activemask, true);
    }
}

void Sm::complete_group(Warp& warp, uint32_t group, bool activemask) {
    Fiber* lanes = &fibers[warp.first];
    for (uint32_t rest = group; rest != 0; rest &= rest - 1) {
        unsigned lane = (unsigned)__builtin_ctz(rest);
        lanes[lane].result = activemask ? group : warp_result(lanes, lane, group);
    }
    if (activemask) {
        warp.at_activemask = 0;
    } else {
        warp.waiting &= ~group;
    }
    for (uint32_t rest = group; rest != 0; rest &= rest - 1) {
        make_ready(&lanes[__builtin_ctz(rest)]);
    }
}

std::string Sm::deadlock_report() const {
    unsigned barrier = 0, warp_ops = 0;
    const Fiber* example = nullptr;
    for (const Fiber& f : fibers) {
        if (f.state == State::Barrier) ++barrier;
        if (f.state == State::Warp) {
            ++warp_ops;
            if (example == nullptr) example = &f;
        }
    }
    std::string text = "deadlock in block " + uint3_text(info.block_idx) + ": " +
                       std::to_string(barrier) + " thread(s) wait at __syncthreads() and " +
                       std::to_string(warp_ops) + " at warp operations that can never complete";
    if (example != nullptr) {
        char detail[160];
        const Warp& warp = warps[example->linear / 32];
        snprintf(detail, sizeof detail,
                 " (thread %s waits with mask 0x%08x; live lanes of its warp: 0x%08x)",
                 uint3_text(example->info.thread_idx).c_str(), example->mask, warp.alive);
        text += detail;
    }
    return text + ". On a GPU this kernel would hang or behave unpredictably.";
}

int Sm::barrier(Fiber* self, int op, int predicate) {
    self->op = op;
    barrier_count += predicate != 0;
    self->state = State::Barrier;
    suspend(self);
    return (int)self->result;
}

unsigned long long Sm::warp_op(Fiber* self, int op, unsigned mask, unsigned long long value,
                               int b, int width) {
    self->op = op;
    self->mask = mask | (1u << self->info.lane);
    self->value = value;
    self->b = b;
    self->width = width;
    self->state = State::Warp;
    suspend(self);
    return self->result;
}

void Sm::yield(Fiber* self) {
    self->state = State::Ready;
    suspend(self);
}

void Sm::suspend(Fiber* self) { switch_to(self, this); }

}  // namespace ks

KS_EXPORT void ks_stop(int code, const char* message) {
    ks::Fiber* self = ks::current_fiber();
    self->sm->stop(self, code, message);
}

// The order of the threads of every block in the launches that follow: descending when
// `yes`, else ascending (the default). Set by the worker between launches, never during one.
KS_EXPORT void ks_set_descending(int yes) { ks::descending = yes != 0; }

KS_EXPORT int ks_barrier(int op, int predicate) {
    ks::Fiber* self = ks::current_fiber();
    return self->sm->barrier(self, op, predicate);
}

KS_EXPORT unsigned long long ks_warp(int op, unsigned int mask, unsigned long long value, int b,
                                     int width) {
    ks::Fiber* self = ks::current_fiber();
    return self->sm->warp_op(self, op, mask, value, b, width);
}

KS_EXPORT void ks_yield(void) {
    ks::Fiber* self = ks::current_fiber();
    self->sm->yield(self);
}

KS_EXPORT long long ks_clock(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

namespace {
const char* access_words(int access) {
    // The sanitizer's TypeCheckKind: 0 load, 1 store, the rest uses of an object through it.
    return access == 0 ? "load" : access == 1 ? "store" : "access";
}
}  // namespace

KS_EXPORT void ks_check_failed(int check, const char* file, unsigned line, const char* type,
                               const char* other, unsigned long long pointer, unsigned align,
                               int access) {
    char text[768];
    switch (check) {
    case KS_CHECK_ALIGN:
        snprintf(text, sizeof text, "misaligned address: %s of %s at 0x%llx, which is not a "
                 "multiple of %u (%s:%u)", access_words(access), type, pointer, align, file, line);
        ks_stop(1, text);
    case KS_CHECK_FLOAT_CAST:
        snprintf(text, sizeof text, "not supported by the CPU backend: an out-of-range "
                 "float->int conversion (%s to %s of a value it cannot hold, or of NaN: the GPU "
                 "saturates, the CPU does not) (%s:%u)", type, other, file, line);
        ks_stop(3, text);
    case KS_CHECK_SHIFT:
        snprintf(text, sizeof text, "not supported by the CPU backend: a shift of %s by a "
                 "negative count or one of at least its width (the GPU clamps the count, the CPU "
                 "masks it) (%s:%u)", type, file, line);
        ks_stop(3, text);
    default:
        snprintf(text, sizeof text, "not supported by the CPU backend: an integer division of "
                 "%s by zero (or of its minimum by -1): the GPU gives a value without a fault, "
                 "the CPU traps (%s:%u)", type, file, line);
        ks_stop(3, text);
    }
}

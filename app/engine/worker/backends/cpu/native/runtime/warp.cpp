// Results of warp operations. Lane selection for shuffles follows PTX's shfl.sync: a segment of
// `width` lanes, sources outside it (or lanes not taking part) give the caller's own value.
#include "runtime.h"

namespace ks {

namespace {
bool in_group(uint32_t group, unsigned lane) { return lane < 32 && ((group >> lane) & 1u); }

// The source lane of a shuffle, or -1 when the lane keeps its own value.
int shuffle_source(const Fiber& me, unsigned lane) {
    unsigned width = (unsigned)me.width;
    if (width == 0 || width > 32 || (width & (width - 1)) != 0) width = 32;
    unsigned segment_mask = (32u - width) & 31u;
    unsigned first = lane & segment_mask;
    unsigned last = first | (31u & ~segment_mask);
    unsigned b = (unsigned)me.b & 31u;
    switch (me.op) {
    case KS_SHFL_IDX: return (int)(first | ((unsigned)me.b & ~segment_mask & 31u));
    case KS_SHFL_UP: return (int)lane - (int)b >= (int)first ? (int)(lane - b) : -1;
    case KS_SHFL_DOWN: return lane + b <= last ? (int)(lane + b) : -1;
    default: return (lane ^ b) <= last ? (int)(lane ^ b) : -1;  // xor
    }
}

unsigned long long reduce(const Fiber* lanes, uint32_t group, int op) {
    unsigned first = (unsigned)__builtin_ctz(group);
    unsigned acc = (unsigned)lanes[first].value;
    for (uint32_t rest = group & (group - 1); rest != 0; rest &= rest - 1) {
        unsigned v = (unsigned)lanes[__builtin_ctz(rest)].value;
        switch (op) {
        case KS_REDUCE_ADD: acc += v; break;
        case KS_REDUCE_MIN: acc = (int)v < (int)acc ? v : acc; break;
        case KS_REDUCE_MAX: acc = (int)v > (int)acc ? v : acc; break;
        case KS_REDUCE_UMIN: acc = v < acc ? v : acc; break;
        case KS_REDUCE_UMAX: acc = v > acc ? v : acc; break;
        case KS_REDUCE_AND: acc &= v; break;
        case KS_REDUCE_OR: acc |= v; break;
        default: acc ^= v; break;
        }
    }
    return acc;
}

uint32_t lanes_where(const Fiber* lanes, uint32_t group, bool (*keep)(const Fiber&, const Fiber&),
                     const Fiber& me) {
    uint32_t result = 0;
    for (uint32_t rest = group; rest != 0; rest &= rest - 1) {
        unsigned lane = (unsigned)__builtin_ctz(rest);
        if (keep(lanes[lane], me)) result |= 1u << lane;
    }
    return result;
}

bool predicate_set(const Fiber& f, const Fiber&) { return f.value != 0; }
bool same_value(const Fiber& f, const Fiber& me) { return f.value == me.value; }
}  // namespace

unsigned long long warp_result(const Fiber* lanes, unsigned lane, uint32_t group) {
    const Fiber& me = lanes[lane];
    switch (me.op) {
    case KS_SHFL_IDX:
    case KS_SHFL_UP:
    case KS_SHFL_DOWN:
    case KS_SHFL_XOR: {
        int source = shuffle_source(me, lane);
        return source >= 0 && in_group(group, (unsigned)source) ? lanes[source].value : me.value;
    }
    case KS_BALLOT: return lanes_where(lanes, group, predicate_set, me);
    case KS_ANY: return lanes_where(lanes, group, predicate_set, me) != 0;
    case KS_ALL: return lanes_where(lanes, group, predicate_set, me) == group;
    case KS_MATCH_ANY: return lanes_where(lanes, group, same_value, me);
    case KS_MATCH_ALL:
        return lanes_where(lanes, group, same_value, me) == group ? (group | (1ull << 32)) : 0;
    case KS_SYNCWARP: return 0;
    default: return reduce(lanes, group, me.op);
    }
}

}  // namespace ks

// size_t, ptrdiff_t and NULL are NVRTC built-ins; this adds their std:: names and offsetof.
#ifndef KERNEL_STUDIO_STDDEF_H
#define KERNEL_STUDIO_STDDEF_H
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
namespace std {
using ::size_t;
using ::ptrdiff_t;
typedef decltype(nullptr) nullptr_t;
}
#endif

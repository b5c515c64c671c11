// <assert.h> for NVRTC: assert is an NVRTC built-in. Like the C header, this one has no include
// guard and honours NDEBUG each time it is included.
#ifdef NDEBUG
#undef assert
#define assert(condition) ((void)0)
#endif

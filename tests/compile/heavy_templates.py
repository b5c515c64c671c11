"""A C++ template whose compile needs time and memory that grow with N (for the compile limits
tests): `RUNAWAY.replace("T<N,N,N>", "T<30,30,30>")`."""

# Distinct instantiations grow as N**3 (no memoisation helps): N=30 takes seconds and ~600 MB
# here; it never hits the compiler's recursion limit. Kept as text so no test runs it whole.
RUNAWAY = """template <int A, int B, int C> struct T {
    static constexpr unsigned v = (T<A-1,B,C>::v + T<A,B-1,C>::v + T<A,B,C-1>::v) % 1000u; };
template <int B, int C> struct T<0,B,C> { static constexpr unsigned v = 1; };
template <int A, int C> struct T<A,0,C> { static constexpr unsigned v = 1; };
template <int A, int B> struct T<A,B,0> { static constexpr unsigned v = 1; };
template <int C> struct T<0,0,C> { static constexpr unsigned v = 1; };
template <int B> struct T<0,B,0> { static constexpr unsigned v = 1; };
template <int A> struct T<A,0,0> { static constexpr unsigned v = 1; };
template <> struct T<0,0,0> { static constexpr unsigned v = 1; };
extern "C" __global__ void k(unsigned* a) { a[0] = T<N,N,N>::v; }
"""

"""What runs in, and talks to, the worker process that holds a device: the server and its client,
the typed messages between them (protocol), the backends (pycuda, cpu emulation, selftest), the
timing plan and sampling loop, and clock readings."""

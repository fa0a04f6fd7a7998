// Keeping asynchronous signals away from threads that run oneDNN's generated GEMM code.
//
// Note [Signals and oneDNN's GEMM kernels]
//   oneDNN's generated sgemm kernels (up to its 3.11; fixed upstream by uxlfoundation/oneDNN#4855,
//   issue #4845) point the stack pointer into a heap buffer while they run. A signal handled on
//   a thread in such a kernel has its frame written there by the kernel: the heap is corrupted,
//   and a later free() aborts ("corrupted size vs. prev_size"). Any handler does it, however
//   harmless: leangrad-train's Ctrl-C flag, leangrad-run passing SIGTERM on to its ranks, a
//   sampling profiler's SIGPROF. Debian 12's oneDNN is 2.6.3. So in a build with oneDNN:
//   - gemm() (kernels/cpu/gemm.cpp) blocks the asynchronous signals on the calling thread for the
//     duration of the call (two sigprocmask calls per product) and restores its mask after; a
//     signal sent meanwhile stays pending and is handled when the product returns;
//   - every OpenMP worker thread blocks them for good: one created inside a product inherits the
//     blocked mask of the thread that started the region, and one created by parallel_for
//     blocks them itself when it first runs a task (kernels/cpu/parallel_for.h). Worker threads
//     never need a signal: the kernel hands a process-directed one to a thread that does not
//     block it, the main thread or one of the program's own. (A sampling profiler driven by
//     SIGPROF therefore takes no samples on them; perf, which counts in the kernel, does.)
//   Synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS) are never
//   blocked: a fault must still be reported where it happens. Without oneDNN nothing is blocked.
//   tests/kernels/test_gemm.cpp (GemmUnderSignals) sends a storm of signals at a thread running
//   products of changing shapes and checks the results and the heap.
#pragma once

#include <signal.h>

namespace leangrad::kernels::cpu {

// Blocks the asynchronous signals on this thread while it lives, when this build has oneDNN;
// restores the thread's mask after. Free (no system call) on a thread that blocks them already:
// a worker, or inside another scope.
class AsyncSignalsDeferred {
 public:
  AsyncSignalsDeferred();
  ~AsyncSignalsDeferred();
  AsyncSignalsDeferred(const AsyncSignalsDeferred&) = delete;
  AsyncSignalsDeferred& operator=(const AsyncSignalsDeferred&) = delete;

 private:
  sigset_t previous_;
  bool active_ = false;
};

// An OpenMP worker's part (Note [Signals and oneDNN's GEMM kernels]): blocks the asynchronous
// signals on the calling thread for good, once per thread, when this build has oneDNN.
void block_async_signals_in_worker();

}  // namespace leangrad::kernels::cpu

#include <leangrad/kernels/cpu/async_signals.h>

#include <pthread.h>

#include <leangrad/kernels/cpu/gemm.h>

namespace leangrad::kernels::cpu {

namespace {

// Every signal but the synchronous ones (Note [Signals and oneDNN's GEMM kernels]).
const sigset_t& async_signals() {
  static const sigset_t set = [] {
    sigset_t s;
    sigfillset(&s);
    for (int synchronous : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS})
      sigdelset(&s, synchronous);
    return s;
  }();
  return set;
}

// Whether this thread blocks them already: a worker that blocked them for good, or a thread
// inside an AsyncSignalsDeferred scope. Then a scope costs no system call.
thread_local bool t_blocked = false;

}  // namespace

AsyncSignalsDeferred::AsyncSignalsDeferred() {
  if (t_blocked || !onednn::built()) return;
  active_ = pthread_sigmask(SIG_BLOCK, &async_signals(), &previous_) == 0;
  t_blocked = active_;
}

AsyncSignalsDeferred::~AsyncSignalsDeferred() {
  if (!active_) return;
  t_blocked = false;
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void block_async_signals_in_worker() {
  if (t_blocked || !onednn::built()) return;
  t_blocked = pthread_sigmask(SIG_BLOCK, &async_signals(), nullptr) == 0;
}

}  // namespace leangrad::kernels::cpu

// leangrad-run: starts the ranks of a distributed job on this machine, as torchrun does, and
// watches them until they end (docs/distributed.md, "Launching").
//   leangrad-run --nproc-per-node 2 program args...
//   leangrad-run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500
//                --nproc-per-node 4 program args...     (and --node-rank 1 on the second machine)
// This file holds the command line and, on node 0, the job's TCP store, served before any rank
// starts (serve_store); launch_plan.h checks the options and makes each rank's environment,
// rank_launcher.cpp (its design at its top) starts the ranks, prefixes their output with
// "[rank R] ", passes signals on and stops them all when one fails.
// Exit codes: 0 when every rank exits 0, else the code of the rank that failed first (128 + the
// signal's number when a signal killed it); interrupted, it dies of the signal it passed on; its
// own: 2 for a bad command line or a program not found, 1 when the store cannot be served (its
// port is in use) or a rank cannot be started.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include <leangrad/core/error.h>
#include <leangrad/distributed/tcp_store_server.h>

#include "launch_plan.h"
#include "rank_launcher.h"

namespace {

using namespace leangrad::tools;

void add_options(CLI::App& app, LaunchOptions& o) {
  app.add_option("--nproc-per-node,--nproc_per_node", o.nproc_per_node,
                 "ranks to start on this machine")
      ->required();
  app.add_option("--nnodes", o.nnodes, "machines of the job, each running one leangrad-run")
      ->capture_default_str();
  app.add_option("--node-rank,--node_rank", o.node_rank,
                 "this machine's index, 0..nnodes-1; its ranks are node-rank * N + 0..N-1")
      ->capture_default_str();
  app.add_option("--master-addr,--master_addr", o.master_addr,
                 "host of node 0, whose leangrad-run serves the store every rank joins (default: "
                 "$MASTER_ADDR, else 127.0.0.1 on one machine; needed with --nnodes > 1)")
      ->envname("MASTER_ADDR");
  app.add_option("--master-port,--master_port", o.master_port,
                 "TCP port of the store node 0's leangrad-run serves (default: $MASTER_PORT, else "
                 "any free port on one machine; needed with --nnodes > 1)")
      ->envname("MASTER_PORT");
  app.add_option("--grace-period", o.grace_period_s,
                 "seconds the ranks have to exit after SIGTERM (or a signal passed on) before "
                 "SIGKILL")
      ->capture_default_str();
  app.prefix_command();  // the first word that is not an option is the program
  app.footer(
      R"(Starts N processes of `program` (looked up in PATH), each with RANK (node-rank * N + local rank),
WORLD_SIZE (nnodes * N), LOCAL_RANK, LOCAL_WORLD_SIZE (N), MASTER_ADDR and MASTER_PORT set, as
torchrun does; OMP_NUM_THREADS, when unset, becomes the cores divided among the N ranks. Node 0's
leangrad-run serves the job's TCP store on MASTER_PORT before any rank starts, and the ranks
get LEANGRAD_USE_AGENT_STORE=1: rank 0 joins that store instead of serving one. Each
line a rank prints is prefixed with "[rank R] " (stdout to stdout, stderr to stderr); the ranks'
stdin is /dev/null. SIGINT, SIGTERM and SIGHUP are passed on to every rank. When a rank exits
non-zero or is killed, the others get SIGTERM (SIGKILL after the grace period). Ctrl-Z
stops the ranks with the launcher.

Exit code: 0 when every rank exits 0; else the code of the rank that failed first (128 + the
signal's number when a signal killed it); when interrupted, leangrad-run dies of the same signal;
2 for a bad command line or a program not found, 1 when the store's port is in use or a rank
could not be started.

Examples:
  leangrad-run --nproc-per-node 2 build/tests/dist_worker collectives
  leangrad-run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 \
               --nproc-per-node 4 app --flag       (and --node-rank 1 on the second machine))");
}

// Node 0's launcher serves the job's TCP store, bound before any rank starts, for as long as the
// job runs (Note [The launcher's store] in leangrad/distributed/tcp_store_server.cpp): on
// --master-port, or on the port the system gives (then written into o.master_port, which the
// ranks get as MASTER_PORT). Throws leangrad::Error when the port is in use. The server's thread
// blocks every signal, so the launcher's handlers run on the main thread (Note [Signals through
// a pipe] in rank_launcher.cpp).
std::unique_ptr<leangrad::distributed::TCPStoreServer> serve_store(LaunchOptions& o) {
  using leangrad::distributed::TCPStoreServer;
  sigset_t every_signal, old_mask;
  sigfillset(&every_signal);
  pthread_sigmask(SIG_BLOCK, &every_signal, &old_mask);  // inherited by the server's thread
  std::unique_ptr<TCPStoreServer> server;
  try {
    server = std::make_unique<TCPStoreServer>(o.master_port, o.nnodes * o.nproc_per_node,
                                              TCPStoreServer::kEveryGroup);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  o.master_port = server->port();
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "leangrad-run: starts the ranks of a distributed program on this machine\n"
      "  leangrad-run --nproc-per-node N [options] [--] program [args...]",
      "leangrad-run"};
  LaunchOptions options;
  add_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "leangrad-run: error: %s\nRun 'leangrad-run --help' for the options.\n",
                 e.what());
    return 2;
  }
  try {
    options.command = app.remaining();
    if (!options.command.empty() && options.command.front() == "--") {
      options.command.erase(options.command.begin());
    } else if (!options.command.empty() && options.command.front().size() > 1 &&
               options.command.front()[0] == '-') {
      throw UsageError("unknown option " + options.command.front() +
                       " (a program whose name starts with '-' goes after --)");
    }
    check_and_complete(options);
    check_fits_limits(options, current_process_limits());
    find_program(options.command.front(), std::getenv("PATH"));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "leangrad-run: error: %s\nRun 'leangrad-run --help' for the options.\n",
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leangrad-run: error: %s\n", e.what());
    return 1;
  }
  std::unique_ptr<leangrad::distributed::TCPStoreServer> store;  // stopped after every rank ended
  if (options.node_rank == 0) {
    try {
      store = serve_store(options);
    } catch (const leangrad::Error& e) {
      std::fprintf(stderr, "leangrad-run: error: cannot serve the job's store: %s\n",
                   e.message().c_str());
      return 1;
    }
  }
  try {
    return run_ranks(std::move(options));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leangrad-run: error: %s\n", e.what());
    return 1;
  }
}

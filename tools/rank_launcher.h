// leangrad-run's launcher: the ranks of this node started, their output prefixed, signals passed
// on, all stopped when one fails (the design is at the top of rank_launcher.cpp). leangrad_run.cpp
// parses the command line into LaunchOptions (launch_plan.h) and calls run_ranks.
#pragma once

#include "launch_plan.h"

namespace leangrad::tools {

// Starts options.nproc_per_node ranks of options.command (checked by check_and_complete) and
// returns when all have ended: 0 when every rank exited 0, else the code of the rank that failed
// first (128 + the signal's number for a signal), 1 when a rank could not be started. After a
// SIGINT, SIGTERM or SIGHUP passed on to the ranks, it dies of that signal instead of returning.
// Throws std::system_error when the launcher itself fails (its ranks are killed first).
int run_ranks(LaunchOptions options);

}  // namespace leangrad::tools

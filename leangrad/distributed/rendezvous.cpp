// Rendezvous (rendezvous.h): open the store, publish this rank's settings, wait for the others.
#include <leangrad/distributed/rendezvous.h>

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/distributed/tcp_store.h>

namespace leangrad::distributed {
namespace {

// "1, 2, 5" (at most 16 ranks, then "and 40 more").
std::string list_ranks(const std::vector<int>& ranks) {
  std::ostringstream out;
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 16);
  for (std::size_t i = 0; i < shown; ++i)
    out << (i > 0 ? ", " : "") << ranks[i];
  if (ranks.size() > shown) out << " and " << ranks.size() - shown << " more";
  return out.str();
}

// What every rank must be started with alike, as rendezvous publishes it: "<world size>
// <backend> <signatures 1|0>". A backend or a signature setting that differs between ranks
// would not fail by itself: the ranks would wait for each other's different first steps until
// the timeout (the signature exchange that one side skips), so they are compared here, where
// the error can name them.
struct Settings {
  int world_size = 0;
  std::string backend;
  int signatures = -1;
};

Settings settings_of(const ProcessGroupConfig& config) {
  return {config.world_size, backend_name(config.backend), config.check_signatures ? 1 : 0};
}

std::string settings_value(const ProcessGroupConfig& config) {
  const Settings s = settings_of(config);
  return detail::str_cat(s.world_size, " ", s.backend, " ", s.signatures);
}

Settings parse_settings(const std::string& value) {
  std::istringstream in(value);
  Settings s;
  in >> s.world_size >> s.backend >> s.signatures;
  return s;
}

// Why rank `r`'s settings `theirs` cannot join ours (empty when they can). The same words on
// whichever rank notices: the higher rank is named first, as the store's server names a rank
// against rank 0.
std::string settings_mismatch(const ProcessGroupConfig& config, int r, const std::string& theirs) {
  const Settings mine = settings_of(config);
  const Settings other = parse_settings(theirs);
  const bool they_first = r > config.rank;
  const int first = they_first ? r : config.rank, second = they_first ? config.rank : r;
  const Settings& a = they_first ? other : mine;
  const Settings& b = they_first ? mine : other;
  if (a.world_size != b.world_size) {
    return detail::str_cat("rank ", first, " was started with WORLD_SIZE=", a.world_size,
                           " but rank ", second, " with WORLD_SIZE=", b.world_size,
                           ": every rank must be given the same WORLD_SIZE");
  }
  if (a.backend != b.backend) {
    return detail::str_cat("rank ", first, " chose the ", printable(a.backend),
                           " backend but rank ", second, " the ", printable(b.backend),
                           " one: every rank must pass the same Backend to init_process_group");
  }
  if (a.signatures != b.signatures) {
    return detail::str_cat("rank ", first,
                           " was started with LEANGRAD_DIST_SIGNATURES=", a.signatures,
                           " but rank ", second, " with LEANGRAD_DIST_SIGNATURES=", b.signatures,
                           ": every rank must exchange signatures before its collectives, or "
                           "none; set it alike for every rank");
  }
  return "";
}

// Waits until every rank has published its settings, checking each against ours as it comes.
void join(Store& store, const ProcessGroupConfig& config, const std::string& prefix) {
  const std::string mine = store_keys::settings(prefix, config.rank);
  LG_CHECK(!store.check({mine}), "init_process_group: ", store.describe(),
           " already holds the key of rank ", config.rank,
           " (left by an earlier job, or two processes have RANK=", config.rank,
           "): give every job an empty folder of its own");
  store.set(mine, settings_value(config));

  const std::string error_key = store_keys::init_error(prefix);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + config.timeout;
  std::vector<bool> joined(static_cast<std::size_t>(config.world_size), false);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (std::optional<std::string> error = store.try_get(error_key)) {
      LG_THROW(Error, "init_process_group: rank ", config.rank, " stops: ", *error);
    }
    for (int r = 0; r < config.world_size; ++r) {
      if (joined[static_cast<std::size_t>(r)]) continue;
      // One round trip per rank: with a large WORLD_SIZE a single pass can outlast the timeout.
      if (std::chrono::steady_clock::now() >= deadline) break;
      const std::optional<std::string> value = store.try_get(store_keys::settings(prefix, r));
      if (!value) continue;
      const std::string message = settings_mismatch(config, r, *value);
      if (!message.empty()) {
        store.set(error_key, message);  // every other rank stops too
        LG_THROW(Error, "init_process_group: ", message);
      }
      joined[static_cast<std::size_t>(r)] = true;
    }
    if (std::all_of(joined.begin(), joined.end(), [](bool b) { return b; })) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  std::vector<int> missing;
  for (int r = 0; r < config.world_size; ++r) {
    if (!joined[static_cast<std::size_t>(r)]) missing.push_back(r);
  }
  LG_THROW(Error, "init_process_group: rank ", config.rank, " waited ",
           format_duration(config.timeout), " for the other ranks of ", config.world_size,
           ", but rank(s) ", list_ranks(missing), " did not join ", store.describe(),
           ". Were they started, with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE?");
}

}  // namespace

Rendezvous open_store(const ProcessGroupConfig& config, int generation) {
  Rendezvous result;
  if (!config.file_store_dir.empty()) {
    result.store = make_file_store(config.file_store_dir, config.timeout);
  } else {
    const TCPStore::Server server = config.agent_store ? TCPStore::Server::Launcher
                                    : config.rank == 0 ? TCPStore::Server::ThisProcess
                                                       : TCPStore::Server::Rank0;
    result.tcp_store =
        std::make_shared<TCPStore>(config.master_addr, config.master_port, config.rank,
                                   config.world_size, config.timeout, server, generation);
    result.store = result.tcp_store;
    result.local_address = result.tcp_store->local_address();
  }
  return result;
}

Rendezvous meet(Rendezvous opened, const ProcessGroupConfig& config, int generation) {
  const std::string prefix = store_keys::group_prefix(generation);
  try {
    join(*opened.store, config, prefix);
  } catch (const Error& e) {
    // Tell the other ranks why this one stops (the first reason stays), so that they stop with
    // it rather than with "the store is unreachable" when rank 0 exits and takes the store.
    try {
      const std::string error_key = store_keys::init_error(prefix);
      std::string reason = e.message();
      const std::string redundant = "init_process_group: ";
      if (reason.rfind(redundant, 0) == 0) reason.erase(0, redundant.size());
      if (!opened.store->check({error_key})) opened.store->set(error_key, reason);
      if (opened.tcp_store) {
        opened.tcp_store->wait_for_ranks_to_leave(
            std::chrono::steady_clock::now() +
            std::min<std::chrono::milliseconds>(config.timeout, std::chrono::seconds(2)));
      }
    } catch (const Error&) {  // the store is gone too: the original error says more
    }
    throw;
  }
  return opened;
}

Rendezvous rendezvous(const ProcessGroupConfig& config, int generation) {
  return meet(open_store(config, generation), config, generation);
}

}  // namespace leangrad::distributed

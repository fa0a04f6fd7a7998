// Resolving InitOptions against the launcher's variables (environment.h). Each rule is one block
// below, in the order init_process_group applies them; each failure names the variable.
#include <leangrad/distributed/environment.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <leangrad/core/error.h>

namespace leangrad::distributed {
namespace {

// A launcher family: the variables it sets for rank, world size and local rank.
struct LauncherFamily {
  const char* rank;
  const char* world_size;
  const char* local_rank;
};
constexpr LauncherFamily kFamilies[] = {
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},  // torchrun, leangrad-run
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},  // mpirun
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},                               // srun
};

// The integer value of variable `name`, which must be a whole number in [low, high].
int parse_int(const std::string& name, const std::string& text, int low, int high) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  LG_CHECK(error == std::errc() && ptr == end && !text.empty(), "init_process_group: ", name, "='",
           printable(text), "' is not an integer");
  LG_CHECK(value >= low && value <= high, "init_process_group: ", name, "=", value,
           " is out of range (", low, " to ", high, ")");
  return value;
}

std::chrono::milliseconds parse_timeout(const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  LG_CHECK(!text.empty() && end == text.c_str() + text.size() && std::isfinite(seconds) &&
               seconds > 0 && seconds <= 1e9,
           "init_process_group: LEANGRAD_DIST_TIMEOUT_S='", printable(text),
           "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

ProcessGroupConfig resolve_init_options(const InitOptions& options, const EnvironmentLookup& env) {
  ProcessGroupConfig config;
  config.backend = options.backend();
  constexpr int kMaxRanks = 1 << 24;
  // -1 is "unset": read from the environment. Another negative value is a mistake, refused
  // rather than quietly replaced by the launcher's variable.
  auto check_option = [](int value, const char* field, const char* what, const char* range) {
    LG_CHECK(value >= -1, "init_process_group: InitOptions().", field, "(", value, ") is not ",
             what, ": ", range, ", or -1 (the default) to read it from the environment");
  };
  check_option(options.rank(), "rank", "a rank", "0 or more");
  check_option(options.world_size(), "world_size", "a world size", "1 or more");
  check_option(options.local_rank(), "local_rank", "a local rank", "0 or more");
  check_option(options.master_port(), "master_port", "a port", "0 to 65535");

  // Rank and world size: the first launcher family whose rank variable is set.
  const LauncherFamily* family = nullptr;
  for (const LauncherFamily& f : kFamilies) {
    if (env(f.rank)) {
      family = &f;
      break;
    }
  }
  if (options.rank() >= 0) {
    config.rank = options.rank();
    config.source = "InitOptions";
  } else {
    LG_CHECK(family != nullptr,
             "init_process_group: this process was not told its rank: set RANK and WORLD_SIZE "
             "(torchrun does), start it with mpirun (OMPI_COMM_WORLD_RANK) or srun "
             "(SLURM_PROCID), or pass InitOptions().rank(r).world_size(n)");
    config.rank = parse_int(family->rank, *env(family->rank), 0, kMaxRanks - 1);
    config.source = family->rank;
  }
  if (options.world_size() >= 0) {
    LG_CHECK(options.world_size() >= 1, "init_process_group: world_size ", options.world_size(),
             " must be at least 1");
    config.world_size = options.world_size();
  } else {
    const LauncherFamily& f = family != nullptr ? *family : kFamilies[0];
    const std::optional<std::string> size = env(f.world_size);
    LG_CHECK(size.has_value(), "init_process_group: ", f.world_size, " is not set (", config.source,
             " gives rank ", config.rank, "): the number of processes in the job is needed too");
    config.world_size = parse_int(f.world_size, *size, 1, kMaxRanks);
    config.source += std::string("/") + f.world_size;
  }
  LG_CHECK(config.rank < config.world_size, "init_process_group: rank ", config.rank, " (from ",
           config.source, ") is not below the world size ", config.world_size, " (ranks are 0..",
           config.world_size - 1, ")");

  if (options.local_rank() >= 0) {
    config.local_rank = options.local_rank();
  } else if (family != nullptr && env(family->local_rank)) {
    config.local_rank = parse_int(family->local_rank, *env(family->local_rank), 0, kMaxRanks - 1);
  }

  // The store: LEANGRAD_STORE=file:///dir, or the TCP store at MASTER_ADDR:MASTER_PORT.
  std::string store = options.store();
  if (store.empty()) store = env("LEANGRAD_STORE").value_or("");
  const std::string file_scheme = "file://";
  if (store.rfind(file_scheme, 0) == 0) {
    config.file_store_dir = store.substr(file_scheme.size());
    LG_CHECK(!config.file_store_dir.empty() && config.file_store_dir[0] == '/',
             "init_process_group: LEANGRAD_STORE='", printable(store),
             "' must name an absolute folder: file:///path/to/shared/folder");
  } else {
    LG_CHECK(store.empty() || store == "tcp", "init_process_group: LEANGRAD_STORE='",
             printable(store),
             "' is not a store: expected file:///path/to/shared/folder, or tcp (the default: "
             "rank 0 serves the store at MASTER_ADDR:MASTER_PORT)");
  }
  const bool alone = config.world_size == 1;
  const bool need_master = config.file_store_dir.empty() && !alone;
  // A group of one that the program sizes itself (InitOptions().world_size(1)) is not the
  // launcher's job, even when a launcher started the process: MASTER_ADDR and MASTER_PORT name
  // the job's store (under leangrad-run a port the launcher holds), and nobody else needs to
  // find this group's store, so it listens on 127.0.0.1, any free port, unless InitOptions
  // names one.
  const bool own_group_of_one = alone && options.world_size() == 1;

  config.master_addr = options.master_addr();
  if (config.master_addr.empty() && !own_group_of_one) {
    config.master_addr = env("MASTER_ADDR").value_or("");
  }
  if (config.master_addr.empty() && !need_master) config.master_addr = "127.0.0.1";
  LG_CHECK(!config.master_addr.empty(),
           "init_process_group: MASTER_ADDR is not set: the host name or address of rank 0's "
           "machine, where the store runs (127.0.0.1 when every rank runs on this machine)");

  bool port_from_environment = false;
  if (options.master_port() >= 0) {
    LG_CHECK(options.master_port() <= 65535, "init_process_group: master_port ",
             options.master_port(), " is not a port (0 to 65535)");
    config.master_port = options.master_port();
  } else if (const std::optional<std::string> port =
                 own_group_of_one ? std::nullopt : env("MASTER_PORT")) {
    config.master_port = parse_int("MASTER_PORT", *port, 0, 65535);
    port_from_environment = true;
  } else {
    LG_CHECK(!need_master,
             "init_process_group: MASTER_PORT is not set: a free TCP port on rank 0's machine "
             "for the store (e.g. 29500), the same for every rank");
    config.master_port = 0;
  }
  LG_CHECK(config.master_port != 0 || !need_master,
           "init_process_group: MASTER_PORT=0 lets the system pick rank 0's port, which the "
           "other ranks cannot know: give a fixed port (e.g. 29500)");

  // leangrad-run serves the store at MASTER_PORT itself (Note [The launcher's store] in
  // tcp_store_server.cpp). A port given in InitOptions is the program's own store: rank 0 serves
  // it, as without a launcher.
  if (const std::optional<std::string> agent = env("LEANGRAD_USE_AGENT_STORE")) {
    LG_CHECK(*agent == "0" || *agent == "1", "init_process_group: LEANGRAD_USE_AGENT_STORE='",
             printable(*agent),
             "' must be 1 (the launcher serves the store at MASTER_ADDR:MASTER_PORT: leangrad-run "
             "sets it) or 0 (rank 0 serves it)");
    config.agent_store = *agent == "1" && port_from_environment && config.master_port != 0 &&
                         config.file_store_dir.empty();
  }

  if (const std::optional<std::string> signatures = env("LEANGRAD_DIST_SIGNATURES")) {
    LG_CHECK(*signatures == "0" || *signatures == "1",
             "init_process_group: LEANGRAD_DIST_SIGNATURES='", printable(*signatures),
             "' must be 1 (check that ranks call the same collectives) or 0");
    config.check_signatures = *signatures == "1";
  }

  // The timeout of rendezvous and of every collective.
  // At most 1e9 s, as LEANGRAD_DIST_TIMEOUT_S: the deadlines (now + timeout) must not overflow
  // the steady clock's nanoseconds.
  LG_CHECK(
      options.timeout().count() >= 0 && options.timeout().count() <= std::int64_t{1000000000000},
      "init_process_group: timeout ", options.timeout().count(), " ms is negative or above 1e9 s");
  if (options.timeout().count() > 0) {
    config.timeout = options.timeout();
  } else if (const std::optional<std::string> seconds = env("LEANGRAD_DIST_TIMEOUT_S")) {
    config.timeout = parse_timeout(*seconds);
  } else {
    config.timeout = kDefaultTimeout;
  }
  return config;
}

}  // namespace leangrad::distributed

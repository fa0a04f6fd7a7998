// resolve_init_options (distributed/environment.h): the launchers' variables, their precedence,
// InitOptions overriding them, and the message of every bad environment. No processes: the
// environment is a map.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <leangrad/core/error.h>
#include <leangrad/distributed/environment.h>

namespace leangrad::distributed {
namespace {

using Env = std::map<std::string, std::string>;

EnvironmentLookup lookup(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

ProcessGroupConfig resolve(const Env& env, const InitOptions& options = InitOptions()) {
  return resolve_init_options(options, lookup(env));
}

// The message of the Error resolve throws (fails the test when it does not throw).
std::string error_of(const Env& env, const InitOptions& options = InitOptions()) {
  try {
    resolve(env, options);
  } catch (const Error& e) {
    return e.message();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

const Env kTorchrun = {{"RANK", "1"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_RANK", "1"},
                       {"MASTER_ADDR", "node0"},
                       {"MASTER_PORT", "29500"}};

TEST(DistributedEnvironment, TorchrunVariables) {
  const ProcessGroupConfig c = resolve(kTorchrun);
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.master_addr, "node0");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_EQ(c.timeout, std::chrono::minutes(10));
  EXPECT_TRUE(c.file_store_dir.empty());
  EXPECT_EQ(c.source, "RANK/WORLD_SIZE");
}

TEST(DistributedEnvironment, OpenMpiAndSlurmVariables) {
  const ProcessGroupConfig mpi = resolve({{"OMPI_COMM_WORLD_RANK", "3"},
                                          {"OMPI_COMM_WORLD_SIZE", "8"},
                                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                          {"MASTER_ADDR", "a"},
                                          {"MASTER_PORT", "1"}});
  EXPECT_EQ(mpi.rank, 3);
  EXPECT_EQ(mpi.world_size, 8);
  EXPECT_EQ(mpi.local_rank, 1);
  const ProcessGroupConfig slurm = resolve({{"SLURM_PROCID", "5"},
                                            {"SLURM_NTASKS", "6"},
                                            {"SLURM_LOCALID", "2"},
                                            {"MASTER_ADDR", "a"},
                                            {"MASTER_PORT", "2"}});
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.world_size, 6);
  EXPECT_EQ(slurm.local_rank, 2);
  EXPECT_EQ(slurm.source, "SLURM_PROCID/SLURM_NTASKS");
}

TEST(DistributedEnvironment, TorchrunWinsOverSlurmInsideAnAllocation) {
  Env env = kTorchrun;
  env["SLURM_PROCID"] = "0";
  env["SLURM_NTASKS"] = "1";
  const ProcessGroupConfig c = resolve(env);
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.world_size, 4);
}

TEST(DistributedEnvironment, InitOptionsOverrideTheEnvironment) {
  const ProcessGroupConfig c = resolve(
      kTorchrun, InitOptions().rank(2).world_size(3).master_addr("x").master_port(7).timeout(
                     std::chrono::seconds(5)));
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.world_size, 3);
  EXPECT_EQ(c.master_addr, "x");
  EXPECT_EQ(c.master_port, 7);
  EXPECT_EQ(c.timeout, std::chrono::seconds(5));
  EXPECT_EQ(c.source, "InitOptions");
}

// -1 means "from the environment"; any other negative value is a mistake, not a silent fallback
// to the launcher's variables.
TEST(DistributedEnvironment, NegativeOptionsOtherThanUnsetAreRefused) {
  EXPECT_EQ(error_of(kTorchrun, InitOptions().rank(-2)),
            "init_process_group: InitOptions().rank(-2) is not a rank: 0 or more, or -1 (the "
            "default) to read it from the environment");
  EXPECT_EQ(error_of(kTorchrun, InitOptions().world_size(-4)),
            "init_process_group: InitOptions().world_size(-4) is not a world size: 1 or more, or "
            "-1 (the default) to read it from the environment");
  EXPECT_EQ(error_of(kTorchrun, InitOptions().local_rank(-3)),
            "init_process_group: InitOptions().local_rank(-3) is not a local rank: 0 or more, or "
            "-1 (the default) to read it from the environment");
  EXPECT_EQ(error_of(kTorchrun, InitOptions().master_port(-29500)),
            "init_process_group: InitOptions().master_port(-29500) is not a port: 0 to 65535, or "
            "-1 (the default) to read it from the environment");
  // Without any environment, as a program that means to set everything itself would run.
  EXPECT_NE(error_of({}, InitOptions().rank(-2).world_size(1)).find("rank(-2)"), std::string::npos);
}

TEST(DistributedEnvironment, ExplicitOptionsNeedNoEnvironmentForOneProcess) {
  const ProcessGroupConfig c = resolve({}, InitOptions().rank(0).world_size(1));
  EXPECT_EQ(c.master_addr, "127.0.0.1");
  EXPECT_EQ(c.master_port, 0);  // any free port: nobody else needs to know it
  EXPECT_EQ(c.local_rank, -1);
}

// Under a launcher, a group of one that the program sizes itself is its own: MASTER_ADDR and
// MASTER_PORT are the job's (under leangrad-run, a port the launcher holds, which rank 0 of the
// small group could neither serve nor join as the job's rank 0).
TEST(DistributedEnvironment, AGroupOfOneSizedByTheProgramIsNotTheLaunchersJob) {
  Env launched = kTorchrun;
  launched["RANK"] = "1";
  launched["MASTER_ADDR"] = "node0.example";
  launched["LEANGRAD_USE_AGENT_STORE"] = "1";
  const ProcessGroupConfig own = resolve(launched, InitOptions().rank(0).world_size(1));
  EXPECT_FALSE(own.agent_store);
  EXPECT_EQ(own.master_addr, "127.0.0.1");
  EXPECT_EQ(own.master_port, 0);
  // Its own address and port, when InitOptions gives them, are taken.
  const ProcessGroupConfig named =
      resolve(launched, InitOptions().rank(0).world_size(1).master_port(29700));
  EXPECT_EQ(named.master_port, 29700);
  EXPECT_FALSE(named.agent_store);
  // The job itself, and a job of one started by the launcher, still join the launcher's store.
  EXPECT_TRUE(resolve(launched).agent_store);
  Env one = launched;
  one["RANK"] = "0";
  one["WORLD_SIZE"] = "1";
  const ProcessGroupConfig job_of_one = resolve(one);
  EXPECT_TRUE(job_of_one.agent_store);
  EXPECT_EQ(job_of_one.master_port, 29500);
  EXPECT_EQ(job_of_one.master_addr, "node0.example");
}

TEST(DistributedEnvironment, TimeoutFromTheEnvironment) {
  Env env = kTorchrun;
  env["LEANGRAD_DIST_TIMEOUT_S"] = "2.5";
  EXPECT_EQ(resolve(env).timeout, std::chrono::milliseconds(2500));
  env["LEANGRAD_DIST_TIMEOUT_S"] = "0";
  EXPECT_NE(error_of(env).find("LEANGRAD_DIST_TIMEOUT_S='0' is not a positive number"),
            std::string::npos);
  env["LEANGRAD_DIST_TIMEOUT_S"] = "10s";
  EXPECT_NE(error_of(env).find("LEANGRAD_DIST_TIMEOUT_S='10s'"), std::string::npos);
}

TEST(DistributedEnvironment, SignatureChecksCanBeTurnedOff) {
  Env env = kTorchrun;
  EXPECT_TRUE(resolve(env).check_signatures);
  env["LEANGRAD_DIST_SIGNATURES"] = "0";
  EXPECT_FALSE(resolve(env).check_signatures);
  env["LEANGRAD_DIST_SIGNATURES"] = "off";
  EXPECT_NE(error_of(env).find("LEANGRAD_DIST_SIGNATURES='off' must be 1"), std::string::npos);
}

// leangrad-run serves the store itself and says so (Note [The launcher's store] in
// tcp_store_server.cpp): rank 0 then joins it. A port of the program's own (InitOptions) or a
// file store is not the launcher's.
TEST(DistributedEnvironment, TheLaunchersStore) {
  EXPECT_FALSE(resolve(kTorchrun).agent_store);  // torchrun, mpirun, srun: rank 0 serves
  Env launched = kTorchrun;
  launched["RANK"] = "0";
  launched["LEANGRAD_USE_AGENT_STORE"] = "1";
  const ProcessGroupConfig c = resolve(launched);
  EXPECT_TRUE(c.agent_store);
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_FALSE(resolve(launched, InitOptions().master_port(29600)).agent_store);
  Env file = launched;
  file["LEANGRAD_STORE"] = "file:///tmp/job";
  EXPECT_FALSE(resolve(file).agent_store);
  launched["LEANGRAD_USE_AGENT_STORE"] = "0";
  EXPECT_FALSE(resolve(launched).agent_store);
  launched["LEANGRAD_USE_AGENT_STORE"] = "yes";
  EXPECT_EQ(error_of(launched),
            "init_process_group: LEANGRAD_USE_AGENT_STORE='yes' must be 1 (the launcher serves "
            "the store at MASTER_ADDR:MASTER_PORT: leangrad-run sets it) or 0 (rank 0 serves it)");
}

TEST(DistributedEnvironment, FileStore) {
  Env env = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LEANGRAD_STORE", "file:///shared/job7"}};
  const ProcessGroupConfig c = resolve(env);  // no MASTER_ADDR/MASTER_PORT needed
  EXPECT_EQ(c.file_store_dir, "/shared/job7");
  env["LEANGRAD_STORE"] = "file://relative";
  EXPECT_NE(error_of(env).find("must name an absolute folder"), std::string::npos);
  env["LEANGRAD_STORE"] = "redis://x";
  EXPECT_NE(error_of(env).find("LEANGRAD_STORE='redis://x' is not a store"), std::string::npos);
}

// Each bad environment and the words its message must contain.
TEST(DistributedEnvironment, BadEnvironmentsAreNamed) {
  struct Case {
    Env env;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {{}, {"was not told its rank", "RANK and WORLD_SIZE", "mpirun", "srun"}},
      {{{"RANK", "0"}}, {"WORLD_SIZE is not set", "RANK gives rank 0"}},
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}},
       {"rank 2", "is not below the world size 2", "ranks are 0..1"}},
      {{{"RANK", "one"}, {"WORLD_SIZE", "2"}}, {"RANK='one' is not an integer"}},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, {"RANK=-1 is out of range"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}, {"WORLD_SIZE=0 is out of range"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}},
       {"MASTER_ADDR is not set", "rank 0's machine"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}}, {"MASTER_PORT is not set"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}},
       {"MASTER_PORT=70000 is out of range"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "0"}},
       {"MASTER_PORT=0", "other ranks cannot know"}},
      {{{"OMPI_COMM_WORLD_RANK", "0"}}, {"OMPI_COMM_WORLD_SIZE is not set"}},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.env);
    for (const std::string& word : c.words) {
      EXPECT_NE(message.find(word), std::string::npos)
          << "message: " << message << "\nmissing: " << word;
    }
  }
  EXPECT_NE(
      error_of(kTorchrun, InitOptions().timeout(std::chrono::milliseconds(-1))).find("is negative"),
      std::string::npos);
  // A deadline of now + timeout must fit the steady clock: the largest timeout failed at once.
  EXPECT_NE(error_of(kTorchrun, InitOptions().timeout(std::chrono::milliseconds::max()))
                .find("above 1e9 s"),
            std::string::npos);
}

}  // namespace
}  // namespace leangrad::distributed

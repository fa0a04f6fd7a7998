// Stand-ins for distributed/gloo/ in a build without Gloo (LEANGRAD_WITH_GLOO=OFF): the same
// symbols, throwing an Error that says how to get Gloo. The TCP store and the launcher
// environment work without Gloo; the Gloo process group and the file store (Gloo's FileStore) do
// not.
#include <leangrad/core/error.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/store.h>

namespace leangrad::distributed {
namespace {

[[noreturn]] void throw_gloo_not_built(const char* what) {
  LG_THROW(Error, what,
           ": leangrad was built without Gloo (LEANGRAD_WITH_GLOO=OFF); install libgloo-dev "
           "(tools/bootstrap.sh does) and configure again");
}

}  // namespace

std::shared_ptr<ProcessGroup> make_gloo_process_group(const ProcessGroupSetup&) {
  throw_gloo_not_built("init_process_group(Backend::Gloo)");
}

bool is_gloo_available() {
  return false;
}

std::shared_ptr<Store> make_file_store(const std::string&, std::chrono::milliseconds) {
  throw_gloo_not_built("the file store (LEANGRAD_STORE=file://...)");
}

}  // namespace leangrad::distributed

// data/file_io.h: readers refuse directories, FIFOs and devices without blocking; atomic writes
// leave nothing behind on failure, write through symbolic links and keep the replaced file's
// permissions, owner and group; temporaries of dead writers of this host are found and removed
// (a write removes those of its own file); and save_safetensors refuses names JSON cannot hold.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/data/file_io.h>
#include <leangrad/data/mnist.h>
#include <leangrad/data/safetensors.h>
#include <leangrad/kernels/creation.h>
#include "data_loading/data_testing.h"
#include "testing/file_size_limit.h"
#include "testing/temporary_names.h"
#include "testing/unprivileged_file_access.h"

namespace leangrad {
namespace {

using test::host_in_temporary_names;
using test::read_bytes;
using test::TempDir;
using test::temporary_name;
using test::write_bytes;

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> names_in(const TempDir& dir) {
  return names_in(dir.path());
}

// Runs `read`, which must throw Error mentioning each of `words`.
void expect_error(const std::function<void()>& read, const std::vector<std::string>& words) {
  try {
    read();
    ADD_FAILURE() << "no error; expected one mentioning '" << words.front() << "'";
  } catch (const Error& e) {
    for (const std::string& word : words)
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

// Runs `read` on a FIFO nobody writes to: it must throw Error naming the FIFO within seconds.
// Were it to block in open(), the test opens the writing end, which releases it, and fails.
void expect_fifo_refused(const std::function<void(const std::string&)>& read,
                         const std::string& caller) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto result = std::async(std::launch::async, [&] {
    expect_error([&] { read(fifo); }, {caller, fifo, "is a FIFO"});
  });
  if (result.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << caller << " blocked on a FIFO";
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  result.get();
}

TEST(FileIo, ReadersRefuseFifosWithoutBlocking) {
  expect_fifo_refused([](const std::string& path) { data::read_idx(path); }, "read_idx");
  expect_fifo_refused([](const std::string& path) { load_safetensors(path); }, "load_safetensors");
  expect_fifo_refused([](const std::string& path) { load_safetensors_metadata(path); },
                      "load_safetensors");
}

TEST(FileIo, ReadersRefuseDirectoriesAndDevices) {
  TempDir dir;
  expect_error([&] { data::read_idx(dir.path()); }, {"read_idx", dir.path(), "is a directory"});
  expect_error([&] { load_safetensors(dir.path()); },
               {"load_safetensors", dir.path(), "is a directory"});
  expect_error([] { data::read_idx("/dev/null"); }, {"read_idx", "is a character device"});
  expect_error([&] { data::read_idx(dir.file("missing")); },
               {"read_idx", "cannot open", "No such file"});
}

TEST(FileIo, DatasetWithADirectoryInPlaceOfAFileIsAnError) {
  TempDir dir;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"})
    std::filesystem::create_directory(dir.file(name));
  expect_error([&] { data::FashionMNIST(dir.path(), data::Split::Train); },
               {"read_idx", "train-images-idx3-ubyte", "is a directory"});
}

TEST(FileIo, ReadWholeFileReturnsTheBytes) {
  TempDir dir;
  const std::string bytes("\x00\x01\xff leangrad", 12);
  write_bytes(dir.file("f"), bytes);
  const std::vector<std::uint8_t> read = read_whole_file(dir.file("f"), "test");
  EXPECT_EQ(std::string(read.begin(), read.end()), bytes);
  EXPECT_TRUE(
      read_whole_file((write_bytes(dir.file("empty"), ""), dir.file("empty")), "test").empty());
}

TEST(FileIo, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("log.json");
  write_file_atomically(path, "old", "test");
  const std::string_view pieces[] = {"new ", "", "bytes"};
  write_file_atomically(path, pieces, "test");
  EXPECT_EQ(read_bytes(path), "new bytes");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"log.json"});
}

// A write that fails part-way (EFBIG past a 4 KiB file-size limit stands in for a full disk,
// and works as root) names the caller and the system's reason, removes the temporary file and
// leaves the old file as it was.
TEST(FileIo, FailedAtomicWriteKeepsTheOldFileAndSaysWhy) {
  TempDir dir;
  const std::string path = dir.file("log.json");
  write_file_atomically(path, "old", "test");
  {
    test::FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.active());
    const std::string big(1 << 16, 'x');
    expect_error([&] { write_file_atomically(path, big, "--log-json"); },
                 {"--log-json", "writing", std::strerror(EFBIG)});
  }
  EXPECT_EQ(read_bytes(path), "old");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"log.json"});
}

// A FIFO, a device or a socket where the file goes is refused before anything is written: the
// rename would put a regular file in its place (as root, a save to /dev/null would replace the
// system's null device). The special file is left as it was.
TEST(FileIo, AtomicWriteRefusesToReplaceAFifo) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  expect_error([&] { write_file_atomically(fifo, "bytes", "--log-json"); },
               {"--log-json", fifo, "is a FIFO", "would replace it"});
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"fifo"});
  // check_writable, which leangrad-train runs on its outputs before training, says so at once.
  expect_error([&] { check_writable(fifo, "--log-json"); }, {"--log-json", fifo, "is a FIFO"});
  // Through a symbolic link too, and to a device.
  const std::string link = dir.file("link");
  std::filesystem::create_symlink(fifo, link);
  expect_error([&] { write_file_atomically(link, "bytes", "save_safetensors"); },
               {"save_safetensors", "a symbolic link to", "is a FIFO"});
  expect_error([&] { write_file_atomically("/dev/null", "bytes", "--save-model"); },
               {"--save-model", "/dev/null", "is a character device"});
}

TEST(FileIo, CheckWritable) {
  TempDir dir;
  check_writable(dir.file("model.safetensors"), "--save-model");
  EXPECT_TRUE(names_in(dir).empty());
  expect_error([&] { check_writable(dir.file("missing/model.safetensors"), "--save-model"); },
               {"--save-model", "cannot write", "missing/model.safetensors", "No such file"});
  write_bytes(dir.file("file"), "x");
  expect_error([&] { check_writable(dir.file("file/model.safetensors"), "--save-model"); },
               {"--save-model", "Not a directory"});
  // A folder, existing or spelled with a trailing '/', is refused at once: the final rename of a
  // whole run's output would fail on it.
  std::filesystem::create_directory(dir.file("folder"));
  expect_error([&] { check_writable(dir.file("folder"), "--save-model"); },
               {"--save-model", "folder", "is a folder"});
  expect_error([&] { check_writable(dir.file("new/"), "--save-model"); },
               {"--save-model", "names a folder"});
  expect_error([&] { write_file_atomically(dir.file("folder"), "x", "--log-json"); },
               {"--log-json", "is a folder"});
}

// A name near NAME_MAX (255 bytes) is written: the temporary next to it keeps a shorter name.
TEST(FileIo, AtomicWriteOfALongName) {
  TempDir dir;
  const std::string name = std::string(240, 'm') + ".safetensors";  // 252 bytes
  write_file_atomically(dir.file(name), "bytes", "test");
  EXPECT_EQ(read_bytes(dir.file(name)), "bytes");
  check_writable(dir.file(name), "test");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{name});
}

// The pid of a process that has exited (and been reaped).
pid_t exited_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// The temporary a failed write names is the host's and the writer's: here a folder that does not
// exist, so that it stays in the message.
TEST(FileIo, TemporaryNamesCarryTheHostAndThePid) {
  TempDir dir;
  const std::string expected =
      dir.file("missing/" + temporary_name("log.json", host_in_temporary_names(), ::getpid(), 0));
  const std::string prefix = expected.substr(0, expected.size() - 1);  // any counter
  expect_error([&] { write_file_atomically(dir.file("missing/log.json"), "x", "test"); },
               {"test", "cannot create", prefix, "No such file"});
}

// Another machine's temporaries in a shared folder (NFS) are never taken for abandoned: their
// pid says nothing about the processes of this one. Nor are those of an older leangrad, which
// named no host.
TEST(FileIo, RemovesOnlyTheTemporariesOfExitedWritersOfThisHost) {
  TempDir dir;
  const std::string host = host_in_temporary_names();
  const pid_t dead_pid = exited_pid();
  const std::string dead = temporary_name("step-00000010.safetensors", host, dead_pid, 0);
  const std::vector<std::string> kept = {
      temporary_name("step-00000020.safetensors", host, ::getpid(), 3),
      temporary_name("log.json", host, ::getppid(), 0),
      temporary_name("step-00000010.safetensors", "node7%2Ecluster", dead_pid, 0),
      temporary_name("step-00000010.safetensors", host + "x", dead_pid, 1),
      temporary_name("step-00000010.safetensors", "x" + host, dead_pid, 2),
      // Host b's temporary of a file named "a.tmp.<this host>": the host is the field after the
      // last ".tmp.", which holds no '.' (a host's dots are spelled %2E).
      temporary_name("a.tmp." + host, "b", dead_pid, 0),
      ".step-00000010.safetensors.tmp." + std::to_string(dead_pid) + ".0",  // no host
      "step-00000010.safetensors", "x.tmp.1.2"};
  for (const std::string& name : kept)
    write_bytes(dir.file(name), "x");
  write_bytes(dir.file(dead), "x");
  EXPECT_EQ(remove_abandoned_temporaries(dir.path()), std::vector<std::string>{dir.file(dead)});
  std::vector<std::string> expected = kept;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names_in(dir), expected);
  EXPECT_TRUE(remove_abandoned_temporaries(dir.file("missing")).empty());
}

// A successful write removes what killed writes of the same file on this host left (their
// writer no longer runs), and nothing else: not the temporaries of live writers, of another host,
// of another file, nor those of a name that only starts like the file's. A name so long that its
// temporaries' names were cut (to NAME_MAX) is recognised by what remains of it.
TEST(FileIo, AtomicWriteRemovesTheAbandonedTemporariesOfItsFile) {
  TempDir dir;
  const std::string host = host_in_temporary_names();
  const pid_t dead_pid = exited_pid();
  const std::string long_name = std::string(240, 'm') + ".safetensors";  // 252 bytes
  // Its temporary's name cut as temporary_path_for cuts it: ".<the name's start>.tmp.<host>...".
  const std::string suffix = temporary_name("", host, dead_pid, 0).substr(1);
  const std::string cut = "." + long_name.substr(0, NAME_MAX - 1 - suffix.size()) + suffix;
  ASSERT_EQ(cut.size(), std::size_t{NAME_MAX});
  const std::vector<std::string> abandoned = {
      temporary_name("model.safetensors", host, dead_pid, 0),
      temporary_name("model.safetensors", host, dead_pid, 7)};
  std::vector<std::string> kept = {
      temporary_name("model.safetensors", host, ::getppid(), 0),
      temporary_name("model.safetensors", "node7%2Ecluster", dead_pid, 0),
      temporary_name("log.json", host, dead_pid, 0),
      temporary_name("model", host, dead_pid, 0),
      temporary_name("model.safetensors.old", host, dead_pid, 0),
      cut};
  for (const std::string& name : abandoned)
    write_bytes(dir.file(name), "partial");
  for (const std::string& name : kept)
    write_bytes(dir.file(name), "partial");
  write_file_atomically(dir.file("model.safetensors"), "new", "test");
  kept.push_back("model.safetensors");
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names_in(dir), kept);

  write_file_atomically(dir.file(long_name), "new", "test");
  std::erase(kept, cut);
  kept.push_back(long_name);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names_in(dir), kept);
}

// Saving to a symbolic link writes the file it points to, through a chain of links, relative or
// absolute, as open() would; the links stay links. A dangling link gets its target created.
TEST(FileIo, AtomicWriteThroughSymbolicLinksWritesTheirTarget) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("big"));
  const std::string target = dir.file("big/model.safetensors");
  write_bytes(target, "old");
  std::filesystem::create_symlink("big/model.safetensors", dir.file("model.safetensors"));
  std::filesystem::create_symlink(dir.file("model.safetensors"), dir.file("latest"));
  write_file_atomically(dir.file("latest"), "new", "test");
  EXPECT_EQ(read_bytes(target), "new");
  EXPECT_EQ(std::filesystem::read_symlink(dir.file("latest")).string(),
            dir.file("model.safetensors"));
  EXPECT_EQ(std::filesystem::read_symlink(dir.file("model.safetensors")).string(),
            "big/model.safetensors");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"big", "latest", "model.safetensors"}));

  std::filesystem::create_symlink("big/new.json", dir.file("dangling"));
  check_writable(dir.file("dangling"), "test");
  EXPECT_FALSE(std::filesystem::exists(dir.file("big/new.json")));
  write_file_atomically(dir.file("dangling"), "created", "test");
  EXPECT_EQ(read_bytes(dir.file("big/new.json")), "created");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("dangling")));
  EXPECT_EQ(names_in(dir.file("big")), (std::vector<std::string>{"model.safetensors", "new.json"}));
}

// Links that loop are an Error naming the path, before anything is written; a link to a folder
// is refused as the folder is.
TEST(FileIo, SymbolicLinksThatLoopAreAnError) {
  TempDir dir;
  std::filesystem::create_symlink("b", dir.file("a"));
  std::filesystem::create_symlink("a", dir.file("b"));
  std::filesystem::create_symlink("self", dir.file("self"));
  for (const std::string name : {"a", "self"}) {
    expect_error([&] { write_file_atomically(dir.file(name), "x", "--save-model"); },
                 {"--save-model", "'" + dir.file(name) + "'", "symbolic links", "loop"});
    expect_error([&] { check_writable(dir.file(name), "--save-model"); },
                 {"--save-model", "'" + dir.file(name) + "'", "loop"});
  }
  std::filesystem::create_directory(dir.file("folder"));
  std::filesystem::create_symlink("folder", dir.file("to-folder"));
  expect_error([&] { write_file_atomically(dir.file("to-folder"), "x", "--log-json"); },
               {"--log-json", "is a folder"});
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"a", "b", "folder", "self", "to-folder"}));
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("folder")));
}

// A link into a folder this user cannot write: an Error naming the link, the file it points to
// and the reason; the link and that file stay as they were (the write cannot be atomic there,
// and replacing the link would put the data where the link does not point).
TEST(FileIo, LinkIntoAFolderThatCannotBeWrittenIsAnError) {
  using std::filesystem::perms;
  const perms read_and_search = perms::owner_read | perms::owner_exec | perms::group_read |
                                perms::group_exec | perms::others_read | perms::others_exec;
  TempDir dir;
  std::filesystem::permissions(dir.path(), read_and_search | perms::owner_write);
  std::filesystem::create_directory(dir.file("readonly"));
  std::filesystem::create_directory(dir.file("out"));
  write_bytes(dir.file("readonly/model.safetensors"), "old");
  std::filesystem::permissions(dir.file("readonly"), read_and_search);
  std::filesystem::permissions(dir.file("out"), perms::all);
  const std::string link = dir.file("out/model.safetensors");
  std::filesystem::create_symlink("../readonly/model.safetensors", link);
  {
    test::UnprivilegedFileAccess nobody;
    ASSERT_TRUE(nobody.active());
    const std::vector<std::string> words = {"--save-model", link, "readonly/model.safetensors",
                                            std::strerror(EACCES)};
    expect_error([&] { write_file_atomically(link, "new", "--save-model"); }, words);
    expect_error([&] { check_writable(link, "--save-model"); }, words);
  }
  std::filesystem::permissions(dir.file("readonly"), perms::owner_all);
  EXPECT_EQ(read_bytes(dir.file("readonly/model.safetensors")), "old");
  EXPECT_EQ(std::filesystem::read_symlink(link).string(), "../readonly/model.safetensors");
  EXPECT_EQ(names_in(dir.file("out")), std::vector<std::string>{"model.safetensors"});
}

// The permission bits of the file a write replaces are kept (a private 0600 checkpoint stays
// private, a 0666 one is not narrowed by the umask); a new file gets 0666 less the umask.
TEST(FileIo, AtomicWriteKeepsThePermissionsOfTheFileItReplaces) {
  TempDir dir;
  struct UmaskRestored {
    mode_t saved;
    ~UmaskRestored() { ::umask(saved); }
  } restored{::umask(022)};
  auto mode_of = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  const std::string path = dir.file("model.safetensors");
  write_file_atomically(path, "first", "test");
  EXPECT_EQ(mode_of(path), 0644u);
  for (const mode_t mode : {0600u, 0640u, 0666u, 0444u}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    write_file_atomically(path, "next", "test");
    EXPECT_EQ(mode_of(path), mode);
    EXPECT_EQ(read_bytes(path), "next");
  }
  // Through a link: the mode of the file it points to.
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  std::filesystem::create_symlink("model.safetensors", dir.file("link"));
  write_file_atomically(dir.file("link"), "linked", "test");
  EXPECT_EQ(mode_of(path), 0600u);
  ::umask(077);
  write_file_atomically(dir.file("new.json"), "{}", "test");
  EXPECT_EQ(mode_of(dir.file("new.json")), 0600u);
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"link", "model.safetensors", "new.json"}));
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

// Replacing a file of another owner (only root can make one): the new file has the old one's
// owner, group and permission bits; setuid, setgid and sticky bits are never carried over
// (Note [Owner and mode] in data/file_io.cpp).
TEST(FileIo, AtomicWriteKeepsTheOwnerAndGroupOfTheFileItReplaces) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root can make a file of another owner";
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  write_bytes(path, "old");
  ASSERT_EQ(::chown(path.c_str(), 1234, 5678), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file_atomically(path, "new", "test");
  struct stat st = stat_of(path);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(read_bytes(path), "new");

  ASSERT_EQ(::chmod(path.c_str(), 07755), 0);
  write_file_atomically(path, "newer", "test");
  st = stat_of(path);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"model.safetensors"});
}

constexpr uid_t kNobody = 65534;

// Runs `write` in a child process of user and group nobody whose one supplementary group is
// `member` (which only root can make), and returns whether it succeeded. A process of its own:
// setgroups changes every thread of a process.
bool succeeds_as_nobody_in_group(gid_t member, const std::function<void()>& write) {
  const pid_t child = ::fork();
  if (child == 0) {
    bool ok = ::setgroups(1, &member) == 0 && ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0;
    try {
      if (ok) write();
    } catch (const Error& e) {
      std::fprintf(stderr, "as nobody: %s\n", e.what());
      ok = false;
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A writer other than root may set only a group it is a member of on its new file (which is its
// own): the replaced file's group is kept when the writer is in it. As root, the writer is a
// child process of user nobody in group 5678; as another user, that user with a group it is in
// besides its own.
TEST(FileIo, AtomicWriteByAnotherUserKeepsTheGroupItIsIn) {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);  // nobody writes there
  const std::string path = dir.file("log.json");
  write_bytes(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0660), 0);
  auto write = [&] { write_file_atomically(path, "new", "test"); };
  uid_t writer = ::geteuid();
  gid_t member = 5678;
  if (writer == 0) {
    ASSERT_EQ(::chown(path.c_str(), 1234, member), 0);  // another user's
    ASSERT_TRUE(succeeds_as_nobody_in_group(member, write));
    writer = kNobody;
  } else {
    std::vector<gid_t> groups(NGROUPS_MAX);
    groups.resize(static_cast<std::size_t>(
        std::max(::getgroups(static_cast<int>(groups.size()), groups.data()), 0)));
    const auto other =
        std::find_if(groups.begin(), groups.end(), [](gid_t g) { return g != ::getegid(); });
    if (other == groups.end())
      GTEST_SKIP() << "this user is in no group besides its own: there is no other group to keep";
    member = *other;
    ASSERT_EQ(::chown(path.c_str(), static_cast<uid_t>(-1), member), 0);  // its own, in `member`
    write();
  }
  const struct stat st = stat_of(path);
  EXPECT_EQ(st.st_uid, writer);
  EXPECT_EQ(st.st_gid, member);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(read_bytes(path), "new");
}

// Where neither the owner nor the group may be set (a file of another user and of a group the
// writer is not in), the refused chown is no failure: the write succeeds, and the new file is
// the writer's, with the old permission bits.
TEST(FileIo, AtomicWriteThatMayNotSetTheOwnerStillWrites) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root: only root can make a file of another owner and group";
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const std::string path = dir.file("model.safetensors");
  write_bytes(path, "old");
  ASSERT_EQ(::chown(path.c_str(), 1234, 1234), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0604), 0);
  ASSERT_TRUE(
      succeeds_as_nobody_in_group(5678, [&] { write_file_atomically(path, "new", "test"); }));
  const struct stat st = stat_of(path);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_gid, kNobody);
  EXPECT_EQ(st.st_mode & 07777, 0604u);
  EXPECT_EQ(read_bytes(path), "new");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"model.safetensors"});
}

TEST(FileIo, SafetensorsNamesMustBeUtf8) {
  TempDir dir;
  const std::string path = dir.file("x.safetensors");
  expect_error(
      [&] {
        save_safetensors(path, {{"bad\xff", ones({1})}});
      },
      {"save_safetensors", "tensor name", "bad\\xFF", "UTF-8"});
  expect_error(
      [&] {
        save_safetensors(path, {{"a", ones({1})}}, {{"key", "\xc0\xaf"}});
      },
      {"save_safetensors", "metadata key 'key'", "UTF-8"});
  expect_error(
      [&] {
        save_safetensors(path, {{"a", ones({1})}}, {{"\xed\xa0\x80", "v"}});
      },
      {"save_safetensors", "metadata key", "UTF-8"});  // a surrogate
  EXPECT_FALSE(std::filesystem::exists(path));
  // Multi-byte UTF-8 round-trips.
  const std::string name =
      "gr\xc3\xb6\xc3\x9f"
      "e.\xe6\x97\xa5\xf0\x9f\x98\x80";
  save_safetensors(path, {{name, ones({2})}}, {{name, name}});
  ASSERT_EQ(load_safetensors(path).at(0).first, name);
  EXPECT_EQ(load_safetensors_metadata(path).at(name), name);
}

}  // namespace
}  // namespace leangrad

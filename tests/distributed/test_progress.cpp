// The progress board (distributed/progress.h) without processes: a board over a store held in
// memory, whose keys the test writes as the other ranks and the TCP store's server would, and the
// sentences diagnose() makes of them, word for word. Note [Naming the missing ranks] and Note
// [Why a rank failed] in distributed/progress.cpp.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include <leangrad/core/error.h>
#include <leangrad/distributed/progress.h>
#include <leangrad/distributed/store_keys.h>

namespace leangrad::distributed {
namespace {

// A store in a map. Keys starting with `unreadable` throw as a store that is gone does.
class MapStore final : public Store {
 public:
  MapStore() : Store(std::chrono::milliseconds(1000)) {}
  void set(const std::string& key, const std::string& value) override {
    LG_CHECK(!refuse_writes, "the store is gone");
    data[key] = value;
  }
  std::optional<std::string> try_get(const std::string& key) override {
    LG_CHECK(unreadable.empty() || key.rfind(unreadable, 0) != 0, "the store is gone");
    const auto it = data.find(key);
    if (it == data.end()) return std::nullopt;
    return it->second;
  }
  std::int64_t add(const std::string&, std::int64_t) override { return 0; }
  std::string describe() const override { return "a store in memory"; }

  std::map<std::string, std::string> data;
  std::string unreadable;
  bool refuse_writes = false;
};

const std::string kPrefix = store_keys::group_prefix(1);

// Rank `r` entered collective `seq` (described as `what`).
void entered(MapStore& store, int r, int seq, const std::string& what) {
  store.data[store_keys::progress(kPrefix, r)] = std::to_string(seq) + " " + what;
}
// Rank `r`'s connection closed `ms` milliseconds after the server started.
void left_at(MapStore& store, int r, int ms) {
  store.data[store_keys::left(kPrefix, r)] = std::to_string(ms);
}
void reported(MapStore& store, int r, const std::string& why) {
  store.data[store_keys::error(kPrefix, r)] = why;
}

const std::string kAllReduce = "all_reduce(sum) of float32 [4]";

TEST(ProgressBoard, QuotesTheReasonOfTheOnlyRankNamed) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 3, kAllReduce);
  left_at(*store, 1, 120);
  reported(*store, 1, "the data of rank 1 is corrupt:\n  record 17 has 5 fields, expected 6\n");
  ProgressBoard board(store, kPrefix, 0, 2);
  EXPECT_EQ(board.diagnose(4, /*timed_out=*/true),
            "rank 1 did not arrive (last collective entered: rank 1: #3 " + kAllReduce +
                "); rank 1 has exited (its connection to the store closed); it reported: the "
                "data of rank 1 is corrupt: record 17 has 5 fields, expected 6");
}

TEST(ProgressBoard, SaysNothingMoreWhenNoRankReported) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 3, kAllReduce);
  left_at(*store, 1, 120);
  ProgressBoard board(store, kPrefix, 0, 2);
  EXPECT_EQ(board.diagnose(4, true),
            "rank 1 did not arrive (last collective entered: rank 1: #3 " + kAllReduce +
                "); rank 1 has exited (its connection to the store closed)");
}

// A rank that destroyed group 1 left group 1 only: under leangrad-run the same store serves
// the next group, where that departure is not an exit.
TEST(ProgressBoard, ADepartureFromAnEarlierGroupIsNotAnExit) {
  auto store = std::make_shared<MapStore>();
  store->data[store_keys::left(store_keys::group_prefix(1), 1)] = "120";
  const std::string group2 = store_keys::group_prefix(2);
  store->data[store_keys::progress(group2, 1)] = "3 " + kAllReduce;
  ProgressBoard board(store, group2, 0, 2);
  EXPECT_EQ(board.diagnose(4, /*timed_out=*/true),
            "rank 1 did not arrive (last collective entered: rank 1: #3 " + kAllReduce + ")");
}

// The first rank to leave is the likely cause: its reason is quoted, by its rank when the
// sentence names others too; a rank that left later (because of it) is not quoted.
TEST(ProgressBoard, QuotesTheFirstRankToLeave) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 4, kAllReduce);
  entered(*store, 2, 3, kAllReduce);
  entered(*store, 3, 4, kAllReduce);
  left_at(*store, 3, 100);
  left_at(*store, 2, 250);
  reported(*store, 3, "out of memory on rank 3");
  reported(*store, 2, "rank 2 failed because rank 3 left");
  ProgressBoard board(store, kPrefix, 0, 4);
  EXPECT_EQ(board.diagnose(4, true),
            "rank 2 did not arrive (last collective entered: rank 2: #3 " + kAllReduce +
                "); rank 3 has exited (its connection to the store closed), then rank 2; rank 3 "
                "reported: out of memory on rank 3");

  // A first leaver that said nothing (killed): the later leaver's report is not its cause.
  store->data.erase(store_keys::error(kPrefix, 3));
  EXPECT_EQ(board.diagnose(4, true),
            "rank 2 did not arrive (last collective entered: rank 2: #3 " + kAllReduce +
                "); rank 3 has exited (its connection to the store closed), then rank 2");
}

// A rank whose collective #4 completed before it left is not a cause, nor quoted.
TEST(ProgressBoard, ARankThatLeftAfterCompletingIsNotQuoted) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 4, kAllReduce);
  store->data[store_keys::finished(kPrefix, 1)] = "4";
  left_at(*store, 1, 100);
  reported(*store, 1, "a later error of rank 1");
  ProgressBoard board(store, kPrefix, 0, 2);
  EXPECT_EQ(board.diagnose(4, true),
            "every rank entered this collective and none has exited before completing it");
}

// No rank exited: the first late rank that reported is quoted (it failed in its own code and
// is still on its way out).
TEST(ProgressBoard, QuotesTheFirstLateRankThatReportedWhenNoneExited) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 3, kAllReduce);
  reported(*store, 2, "rank 2 could not open its checkpoint");
  ProgressBoard board(store, kPrefix, 0, 3);
  EXPECT_EQ(board.diagnose(4, true),
            "ranks 1 and 2 did not arrive (last collective entered: rank 1: #3 " + kAllReduce +
                "; rank 2: no collective yet); rank 2 reported: rank 2 could not open its "
                "checkpoint");
}

// Reading the reports fails: the sentence stands without the quote, and nothing throws.
TEST(ProgressBoard, AReportThatCannotBeReadIsLeftOut) {
  auto store = std::make_shared<MapStore>();
  entered(*store, 1, 3, kAllReduce);
  left_at(*store, 1, 120);
  reported(*store, 1, "never read");
  store->unreadable = kPrefix + "error/";
  ProgressBoard board(store, kPrefix, 0, 2);
  EXPECT_EQ(board.diagnose(4, true),
            "rank 1 did not arrive (last collective entered: rank 1: #3 " + kAllReduce +
                "); rank 1 has exited (its connection to the store closed)");
}

TEST(ProgressBoard, ReportKeepsAtMostItsBoundAndNeverThrows) {
  auto store = std::make_shared<MapStore>();
  ProgressBoard board(store, kPrefix, 1, 2);
  board.report(std::string(10000, 'x'));
  EXPECT_EQ(store->data.at(store_keys::error(kPrefix, 1)),
            std::string(ProgressBoard::kReportBytes, 'x'));
  store->refuse_writes = true;
  EXPECT_NO_THROW(board.report("the store is gone, and this is dropped"));
  EXPECT_EQ(store->data.at(store_keys::error(kPrefix, 1)).size(), ProgressBoard::kReportBytes);
}

TEST(QuoteReport, OneLineCutAtACharacterBoundary) {
  EXPECT_EQ(quote_report("short", 400), "short");
  EXPECT_EQ(quote_report("a\n\n\tb\r\nc \n", 400), "a b c");
  EXPECT_EQ(quote_report("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(quote_report("abcdefghijk", 10), "abcdefg...");
  // "é" is two bytes (C3 A9): a cut after 7 bytes would split the fourth one, so it keeps three.
  EXPECT_EQ(quote_report("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 10),
            "\xC3\xA9\xC3\xA9\xC3\xA9...");
}

}  // namespace
}  // namespace leangrad::distributed

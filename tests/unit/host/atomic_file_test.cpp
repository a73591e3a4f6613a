// io/atomic_file: write-to-temporary-then-rename and the advisory file lock.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "io/atomic_file.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string &name) {
  fs::path d = fs::temp_directory_path() / ("htp-atomic-file-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(AtomicFile, WritesAndReplacesLeavingNoTemporary) {
  const fs::path dir = fresh_dir("replace");
  ASSERT_FALSE(htp::atomic_write_file(dir / "f.json", "first"));
  ASSERT_FALSE(htp::atomic_write_file(dir / "f.json", "second, longer"));
  EXPECT_EQ(slurp(dir / "f.json"), "second, longer");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, ConcurrentWritersNeverLeaveAPartialFile) {
  const fs::path dir = fresh_dir("race");
  const fs::path file = dir / "shared.bin";
  std::vector<std::string> contents;
  for (int i = 0; i < 8; ++i) contents.push_back(std::string(64 * 1024 + i, static_cast<char>('a' + i)));
  std::atomic<bool> failed{false};
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i)
    writers.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k)
        if (htp::atomic_write_file(file, contents[i])) failed = true;
    });
  for (auto &t : writers) t.join();
  EXPECT_FALSE(failed);
  const std::string got = slurp(file);
  EXPECT_NE(std::find(contents.begin(), contents.end(), got), contents.end()) << "a torn write of " << got.size();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1) << "temporaries left";
  fs::remove_all(dir);
}

TEST(AtomicFile, ReportsTheTargetWhenTheDirectoryIsMissing) {
  const fs::path file = fresh_dir("missing") / "no" / "such" / "dir" / "f.txt";
  auto d = htp::atomic_write_file(file, "x");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "io.write");
  EXPECT_NE(d->message.find(file.string()), std::string::npos) << d->message;
}

TEST(FileLock, SerialisesHolders) {
  const fs::path dir = fresh_dir("lock");
  std::atomic<int> inside{0}, max_inside{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        htp::FileLock lock(dir / "l.lock");  // flock locks are per open file description: threads exclude
        ASSERT_TRUE(lock.locked());
        const int now = ++inside;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
        --inside;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(max_inside.load(), 1);
  fs::remove_all(dir);
}

}  // namespace

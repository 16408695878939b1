#pragma once

// A fixture with a scratch directory of its own per test (removed before and after), and files
// written into it.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hubwatch::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("hubwatch_scratch_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `content` to dir_/name; returns the path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir_;
};

}  // namespace hubwatch::testing

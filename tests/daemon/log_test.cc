// The daemon's log formats: readable lines, journald priority prefixes under systemd, JSON.

#include "daemon/service/log.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

namespace hubwatch::service {
namespace {

std::string Logged(LogFormat format, const std::string& level, void (*emit)(spdlog::logger&)) {
  auto logger = MakeLogger(format, level);
  EXPECT_TRUE(logger.ok());
  ::testing::internal::CaptureStderr();
  emit(**logger);
  return ::testing::internal::GetCapturedStderr();
}

TEST(Log, UnderSystemdLinesCarryThePriorityAndNoTimestamp) {
  const std::string out = Logged(LogFormat::kJournal, "info", [](spdlog::logger& l) {
    l.info("google/gemma-2-9b-it@1a2b3c4: 3 changes");
    l.warn("two\nlines");
    l.error("failed");
    l.debug("not at info");
  });
  EXPECT_EQ(out, "<6>google/gemma-2-9b-it@1a2b3c4: 3 changes\n<4>two\\x0alines\n<3>failed\n");
}

TEST(Log, TextLinesAreStampedInUtcAndAligned) {
  const std::string out =
      Logged(LogFormat::kText, "debug", [](spdlog::logger& l) { l.warn("slow hub"); });
  EXPECT_TRUE(std::regex_match(
      out, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warn  slow hub\n)")))
      << out;
}

// Upstream text in a message (a commit title) cannot drive the terminal or fake a log line.
TEST(Log, TextLinesEscapeControlCharacters) {
  const std::string out = Logged(LogFormat::kText, "info", [](spdlog::logger& l) {
    l.info(
        "org/m@1a2b3c4: fix \x1b[2J\x1b[31mred\n2026-01-01T00:00:00.000Z error  fake \xc2\x9b\xff");
  });
  EXPECT_TRUE(
      std::regex_match(out, std::regex(R"(\S+ info  org/m@1a2b3c4: fix \\x1b\[2J\\x1b\[31mred\\x0a)"
                                       R"(2026-01-01T00:00:00\.000Z error  fake \\u009b\\xff\n)")))
      << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  const std::string journal = Logged(LogFormat::kJournal, "info", [](spdlog::logger& l) {
    l.info("title \x1b]0;owned\x07\r\n<3>fake");
  });
  EXPECT_EQ(journal, "<6>title \\x1b]0;owned\\x07\\x0d\\x0a<3>fake\n");
}

TEST(Log, JsonLinesParse) {
  const std::string out =
      Logged(LogFormat::kJson, "info", [](spdlog::logger& l) { l.error("quote \" and\nnewline"); });
  ASSERT_FALSE(out.empty());
  ASSERT_EQ(out.back(), '\n');
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["level"], "error");
  EXPECT_EQ(j["msg"], "quote \" and\nnewline");
  EXPECT_TRUE(j["ts"].get<std::string>().ends_with("Z"));
}

TEST(Log, FormatFollowsJournalStreamAndConfig) {
  unsetenv("JOURNAL_STREAM");
  EXPECT_EQ(ChooseLogFormat("text"), LogFormat::kText);
  setenv("JOURNAL_STREAM", "8:12345", 1);
  EXPECT_EQ(ChooseLogFormat("text"), LogFormat::kJournal);
  EXPECT_EQ(ChooseLogFormat("json"), LogFormat::kJson);
  unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(MakeLogger(LogFormat::kText, "chatty").ok());
}

}  // namespace
}  // namespace hubwatch::service

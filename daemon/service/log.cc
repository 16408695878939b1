#include "daemon/service/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>

#include "tracker/diff/terminal_text.h"

namespace hubwatch::service {
namespace {

// syslog priorities for the sd-daemon prefix.
int Priority(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::critical:
      return 2;
    case spdlog::level::err:
      return 3;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::info:
      return 6;
    default:
      return 7;
  }
}

// At most five letters, so text lines align: trace, debug, info, warn, error, crit.
std::string LevelName(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::critical:
      return "crit";
    default: {
      const auto name = spdlog::level::to_string_view(l);
      return std::string(name.data(), name.size());
    }
  }
}

class LineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LineSink(LogFormat format) : format_(format) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text(msg.payload.data(), msg.payload.size());
    std::string line;
    if (format_ == LogFormat::kJournal) {
      line = "<" + std::to_string(Priority(msg.level)) + ">" + diff::EscapeForTerminal(text);
    } else {
      const auto t = std::chrono::system_clock::to_time_t(msg.time);
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch())
              .count() %
          1000;
      std::tm tm{};
      gmtime_r(&t, &tm);
      char stamp[40];
      std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
      char frac[8];
      std::snprintf(frac, sizeof frac, ".%03lldZ", static_cast<long long>(ms));
      const std::string level = LevelName(msg.level);
      if (format_ == LogFormat::kJson) {
        line =
            nlohmann::json{{"ts", std::string(stamp) + frac}, {"level", level}, {"msg", text}}.dump(
                -1, ' ', false, nlohmann::json::error_handler_t::replace);
      } else {
        std::string lv = level;
        lv.resize(5, ' ');
        line = std::string(stamp) + frac + " " + lv + " " + diff::EscapeForTerminal(text);
      }
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  LogFormat format_;
};

}  // namespace

LogFormat ChooseLogFormat(const std::string& configured) {
  if (configured == "json") return LogFormat::kJson;
  return std::getenv("JOURNAL_STREAM") ? LogFormat::kJournal : LogFormat::kText;
}

Result<std::shared_ptr<spdlog::logger>> MakeLogger(LogFormat format, const std::string& level) {
  const spdlog::level::level_enum l = spdlog::level::from_str(level);
  if (l == spdlog::level::off && level != "off") {
    return Error::InvalidInput("unknown log level " + level);
  }
  auto logger = std::make_shared<spdlog::logger>("hubwatch", std::make_shared<LineSink>(format));
  logger->set_level(l);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

}  // namespace hubwatch::service

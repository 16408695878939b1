// hubwatch calibrate: the estimator against published measured runs (calibration.h).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "estimator/base/text.h"
#include "estimator/calibration.h"

namespace hubwatch::cli {
namespace {

constexpr const char kUsage[] =
    R"(usage: hubwatch calibrate --measurements FILE.jsonl --configs DIR [--held-out] [--json]

Estimates every published measured run in FILE.jsonl with that run's own settings, in the number
it measured, and prints measured against estimated: the error, and whether the fit verdict on the
run's card would have been right (a run that finished is never "does not fit"). Then the median
and worst |error| by mode and by source, and every run it skipped with the reason (a mode,
setting or length it cannot model or that the source leaves open).

Each line of FILE.jsonl is one record; only its "norm" object is read (the settings in fixed
vocabularies: tests/fixtures/calibration/README.md). The model's config.json is read from
DIR/<org>__<name>.config.json; a quantized repository without one (a name ending -GPTQ-Int4,
-GPTQ-Int8, -GPTQ, -AWQ, -Int4 or -Int8) is read from its base model's config (the same name
without the suffix, in its organisation or else in any other in DIR), and the case says so.
A record whose measured values are out of range (a peak that is not positive or over 100,000
GiB, a batch or length below 1 or absurdly large) is refused, naming the record and the field;
so is an input that is not a regular file (a fifo).

options:
  --measurements FILE  the measured runs, one JSON record per line
  --configs DIR        the models' config.json files
  --held-out           also the one tuned constant judged fairly: runtime.fragmentation (the
                       allocator's reserve over allocated bytes) tuned on every other source,
                       and each source's cases estimated with that value
  --json               {"cases": [...], "skipped": [...], "summary": {...}, "by_mode": {...},
                       "by_source": {...}, "held_out": [...] (with --held-out)}
  -h, --help           show this help

Exit status: 0 when it ran (whatever the errors), 2 on unreadable input.
)";

constexpr size_t kMaxMeasurementBytes = 64 << 20;
constexpr size_t kMaxConfigBytes = 16 << 20;

struct Case {
  CalibrationCase result;
  std::string config_model;  // whose config.json was read, when not the run's own
};

// What a record's measured values may be. A peak is positive and finite, and at most 100,000
// GiB: far above any published run (the largest, a multi-GPU total, is a few hundred GiB) and
// below where a unit mix-up lands (bytes read as GiB: ~1e10). Counts (batch, accumulation
// steps, LoRA rank, GPUs) are at least 1 and at most 2^20; token lengths at most 2^24 (16M),
// the prompt's and generation's at least 0, the sequence's at least 1.
constexpr double kMaxMeasuredGib = 100'000;
constexpr int64_t kMaxCount = int64_t{1} << 20;
constexpr int64_t kMaxTokens = int64_t{1} << 24;

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Whether the run's measured values are in range; the error names the field and the range.
Status CheckMeasuredValues(const MeasuredRun& run) {
  if (run.value_gib) {
    const double v = *run.value_gib;
    if (!std::isfinite(v) || v <= 0 || v > kMaxMeasuredGib) {
      return Error::InvalidInput("norm.value_gib is " + Number(v) +
                                 ", not a measured peak (positive, finite, at most " +
                                 Grouped(static_cast<uint64_t>(kMaxMeasuredGib)) + " GiB)");
    }
  }
  struct Field {
    const char* name;
    const std::optional<int64_t>& value;
    int64_t min, max;
  };
  const Field fields[] = {{"batch_size", run.batch, 1, kMaxCount},
                          {"grad_accum", run.grad_accum, 1, kMaxCount},
                          {"lora_r", run.lora_r, 1, kMaxCount},
                          {"num_gpus", run.num_gpus, 1, kMaxCount},
                          {"seq_len", run.seq_len, 1, kMaxTokens},
                          {"prompt_tokens", run.prompt_tokens, 0, kMaxTokens},
                          {"generated_tokens", run.generated_tokens, 0, kMaxTokens}};
  for (const Field& f : fields) {
    if (f.value && (*f.value < f.min || *f.value > f.max)) {
      return Error::InvalidInput(std::string("norm.") + f.name + " is " + std::to_string(*f.value) +
                                 ", outside " + std::to_string(f.min) + ".." +
                                 Grouped(static_cast<uint64_t>(f.max)));
    }
  }
  return Status::Ok();
}

// `path`'s bytes, when it is a regular file. Opened O_NONBLOCK, so a fifo (or a device) costs
// an error, never a hang; the blocking mode is restored before reading. Messages do not name
// the file: the caller does.
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return Error::InvalidInput(std::string("cannot open for reading: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a fifo"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device or other special file";
    ::close(fd);
    return Error::InvalidInput(std::string("not a regular file (") + kind + "), not read");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return Error::InvalidInput(std::string("read error: ") + std::strerror(error));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      return Error::InvalidInput("larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return data;
}

// Every <org>__<name>.config.json in DIR that reads as a JSON object, under "org/name". A file
// that is not JSON (or not an object) is left out: a run of its model then says it has no
// config.json. Errors: DIR is not a directory, or a file of that name is not a regular file
// (a fifo would hang the read) or cannot be read.
Result<CalibrationConfigs> LoadConfigs(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error::InvalidInput("--configs " + Clip(dir) + ": not a directory");
  }
  CalibrationConfigs configs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".config.json";
    const size_t sep = file.find("__");
    if (sep == std::string::npos || file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    Result<std::string> text = ReadRegularFile(entry.path().string(), kMaxConfigBytes);
    if (!text.ok()) {
      return Error::InvalidInput("--configs " + Clip(dir) + ": " + Clip(file) + ": " +
                                 text.error().message);
    }
    nlohmann::json config = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded() || !config.is_object()) continue;
    configs.Add(
        file.substr(0, sep) + "/" + file.substr(sep + 2, file.size() - suffix.size() - sep - 2),
        std::move(config));
  }
  if (ec) return Error::InvalidInput("--configs " + Clip(dir) + ": " + ec.message());
  return configs;
}

std::string Percent(double v, bool sign) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", v);
  return buf;
}

std::string Gib(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

nlohmann::json SummaryJson(const CalibrationSummary& s) {
  return {{"median_abs_error_pct", s.median_abs_error_pct},
          {"worst_abs_error_pct", s.worst_abs_error_pct},
          {"worst_id", s.worst_id},
          {"false_fits", s.false_fits},
          {"wrong_verdicts", s.wrong_verdicts},
          {"cases", s.cases},
          {"skipped", s.skipped}};
}

// Summaries of the cases grouped by `key`, in name order.
std::map<std::string, CalibrationSummary> GroupBy(const std::vector<Case>& cases,
                                                  const std::string CalibrationCase::*key) {
  std::map<std::string, std::vector<CalibrationCase>> groups;
  for (const Case& c : cases) groups[c.result.*key].push_back(c.result);
  std::map<std::string, CalibrationSummary> out;
  for (const auto& [name, members] : groups) out[name] = Summarize(members);
  return out;
}

void PrintGroups(std::ostream& out, const char* title,
                 const std::map<std::string, CalibrationSummary>& groups) {
  out << "\n" << Pad(title, 26) << "cases  skipped  median |error|  worst |error|\n";
  for (const auto& [name, s] : groups) {
    out << Pad(EscapeControls(Clip(name, 24)), 26) << PadLeft(std::to_string(s.cases), 5)
        << PadLeft(std::to_string(s.skipped), 9)
        << PadLeft(s.cases ? Percent(s.median_abs_error_pct, false) : "-", 16)
        << PadLeft(s.cases ? Percent(s.worst_abs_error_pct, false) : "-", 15) << "\n";
  }
}

}  // namespace

int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err) {
  CommonFlags flags;
  std::vector<std::string> positional;
  Args rest;
  bool held_out = false;
  for (const std::string& a : args) {
    if (a == "--held-out") {
      held_out = true;
    } else {
      rest.push_back(a);
    }
  }
  if (Status s = ParseCommon(rest, flags, positional, {"--measurements", "--configs"}); !s.ok()) {
    return Fail(err, "calibrate", s);
  }
  if (flags.help) {
    out << kUsage;
    return 0;
  }
  if (!positional.empty()) {
    return Fail(err, "calibrate",
                Error::InvalidInput("unexpected argument '" + Clip(positional[0]) +
                                    "' (see hubwatch calibrate --help)"));
  }
  const auto measurements = flags.values.find("--measurements");
  const auto configs = flags.values.find("--configs");
  if (measurements == flags.values.end() || configs == flags.values.end()) {
    return Fail(err, "calibrate",
                Error::InvalidInput("needs --measurements FILE.jsonl and --configs DIR"));
  }
  Result<std::string> text = ReadRegularFile(measurements->second, kMaxMeasurementBytes);
  if (!text.ok()) {
    return Fail(err, "calibrate",
                Error::InvalidInput("--measurements " + Clip(measurements->second) + ": " +
                                    text.error().message));
  }
  Result<CalibrationConfigs> loaded = LoadConfigs(configs->second);
  if (!loaded.ok()) return Fail(err, "calibrate", loaded.error());

  std::vector<Case> cases;
  const CalibrationConfigs& configs_read = *loaded;
  std::deque<MeasuredRun> runs;  // its elements stay put: calibration_runs points at them
  std::vector<CalibrationRun> calibration_runs;
  std::istringstream lines(*text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    const std::string where = Clip(measurements->second) + ":" + std::to_string(number) + ": ";
    if (record.is_discarded()) {
      return Fail(err, "calibrate", Error::InvalidInput(where + "not JSON"));
    }
    Result<MeasuredRun> run = ParseMeasuredRun(record);
    if (!run.ok()) return Fail(err, "calibrate", Error::InvalidInput(where + run.error().message));
    if (Status s = CheckMeasuredValues(*run); !s.ok()) {
      return Fail(
          err, "calibrate",
          Error::InvalidInput(where + "record \"" + Clip(run->id) + "\": " + s.error().message));
    }
    Case c;
    const nlohmann::json* config = configs_read.For(run->model, &c.config_model);
    cases.push_back(std::move(c));
    runs.push_back(std::move(run).value());
    calibration_runs.push_back({&runs.back(), config});
  }
  std::vector<CalibrationCase> calibrated = CalibrateAll(calibration_runs);
  for (size_t i = 0; i < cases.size(); ++i) cases[i].result = std::move(calibrated[i]);

  std::vector<CalibrationCase> results;
  for (const Case& c : cases) results.push_back(c.result);
  const CalibrationSummary all = Summarize(results);
  const auto by_mode = GroupBy(cases, &CalibrationCase::mode);
  const auto by_source = GroupBy(cases, &CalibrationCase::source);
  std::vector<HeldOutSource> held;
  if (held_out) held = HoldOutEachSource(calibration_runs);

  if (flags.json) {
    nlohmann::json j = {{"cases", nlohmann::json::array()},
                        {"skipped", nlohmann::json::array()},
                        {"summary", SummaryJson(all)},
                        {"by_mode", nlohmann::json::object()},
                        {"by_source", nlohmann::json::object()}};
    for (const Case& c : cases) {
      const CalibrationCase& r = c.result;
      if (!r.skipped.empty()) {
        j["skipped"].push_back({{"id", r.id}, {"source", r.source}, {"reason", r.skipped}});
        continue;
      }
      nlohmann::json row = {{"id", r.id},
                            {"source", r.source},
                            {"model", r.model},
                            {"mode", r.mode},
                            {"metric", r.metric},
                            {"measured_gib", r.measured_gib},
                            {"estimated_gib", r.estimated_gib},
                            {"error_pct", r.error_pct},
                            {"verdict_ok", r.verdict_ok},
                            {"out_of_memory", r.out_of_memory},
                            {"at_length_cap", r.at_length_cap},
                            {"positions_cap", r.positions_cap}};
      if (!c.config_model.empty()) row["config_of"] = c.config_model;
      j["cases"].push_back(std::move(row));
    }
    for (const auto& [name, s] : by_mode) j["by_mode"][name] = SummaryJson(s);
    for (const auto& [name, s] : by_source) j["by_source"][name] = SummaryJson(s);
    if (held_out) {
      j["held_out"] = nlohmann::json::array();
      for (const HeldOutSource& h : held) {
        j["held_out"].push_back({{"source", h.source},
                                 {"fragmentation", h.fragmentation},
                                 {"summary", SummaryJson(h.summary)}});
      }
    }
    out << j.dump(2) << "\n";
    return 0;
  }

  out << "hubwatch calibrate: " << cases.size() << " published runs, " << all.cases
      << " estimated, " << all.skipped << " skipped\n\n"
      << Pad("run", 30) << Pad("model", 38) << Pad("mode", 10) << Pad("metric", 10)
      << "measured  estimated   error  verdict\n";
  for (const Case& c : cases) {
    const CalibrationCase& r = c.result;
    if (!r.skipped.empty()) continue;
    out << Pad(EscapeControls(Clip(r.id, 28)), 30) << Pad(EscapeControls(Clip(r.model, 36)), 38)
        << Pad(EscapeControls(Clip(r.mode, 8)), 10) << Pad(r.metric, 10)
        << PadLeft(r.out_of_memory ? "OOM" : Gib(r.measured_gib), 8)
        << PadLeft(Gib(r.estimated_gib), 11)
        << PadLeft(r.out_of_memory ? "-" : Percent(r.error_pct, true), 8) << "  "
        << (r.verdict_ok      ? "ok"
            : r.out_of_memory ? "WRONG: called fits"
                              : "WRONG: called does-not-fit")
        << (r.at_length_cap ? "  (at the length cap)" : "")
        << (r.positions_cap
                ? "  (" + std::to_string(r.positions_cap) + " tokens: its learned positions)"
                : "")
        << (c.config_model.empty() ? "" : "  (config of " + EscapeControls(c.config_model) + ")")
        << "\n";
  }
  out << "(GiB; error = (estimated - measured) / measured)\n";
  PrintGroups(out, "by mode", by_mode);
  PrintGroups(out, "by source", by_source);
  out << "\nall: " << all.cases << " cases, median |error| "
      << Percent(all.median_abs_error_pct, false) << ", worst "
      << Percent(all.worst_abs_error_pct, false) << " (" << EscapeControls(all.worst_id)
      << "), wrong verdicts " << all.wrong_verdicts << ", false fits " << all.false_fits
      << ", skipped " << all.skipped << " of " << cases.size() << "\n";
  if (held_out) {
    out << "\nheld out: runtime.fragmentation tuned on the other sources, then this one "
           "estimated with it\n"
        << Pad("source", 26) << "fragmentation  cases  median |error|  worst |error|\n";
    for (const HeldOutSource& h : held) {
      char f[16];
      std::snprintf(f, sizeof f, "%.2f", h.fragmentation);
      out << Pad(EscapeControls(Clip(h.source, 24)), 26) << PadLeft(f, 13)
          << PadLeft(std::to_string(h.summary.cases), 7)
          << PadLeft(h.summary.cases ? Percent(h.summary.median_abs_error_pct, false) : "-", 16)
          << PadLeft(h.summary.cases ? Percent(h.summary.worst_abs_error_pct, false) : "-", 15)
          << "\n";
    }
  }
  if (all.skipped) {
    out << "\nskipped:\n";
    for (const Case& c : cases) {
      if (c.result.skipped.empty()) continue;
      out << "  " << EscapeControls(Clip(c.result.id, 40)) << ": "
          << EscapeControls(c.result.skipped) << "\n";
    }
  }
  return 0;
}

}  // namespace hubwatch::cli

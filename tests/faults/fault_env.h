#pragma once

// The fault matrix's fixture: the `hubwatch serve` fixture of tests/daemon (fakehub
// with the incident fixtures, an in-process Service) plus what every fault test asks - the
// API's health, the Prometheus counters, a repo's state and history through the API, and the
// expected history of a fixture repo - all read with deadlines, never fixed sleeps.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/api/http_client.h"
#include "tests/daemon/service_env.h"

namespace hubwatch::service::testing {

using api::testing::HttpResponse;
using api::testing::Request;

// The repo most fault tests watch: three commits, not gated, an LFS safetensors file.
constexpr const char kRepo[] = "microsoft/Phi-3-mini-4k-instruct";

class FaultMatrixTest : public ServiceTest {
 protected:
  // A daemon config for `repos`: polled every second, webhooks none, API on 127.0.0.1:0.
  config::DaemonConfig FastConfig(std::vector<std::string> repos) {
    config::DaemonConfig c = Config(std::move(repos));
    c.poll.interval_s = 1;
    c.poll.hints = false;  // the matrix drives per-repo polls, every second (hints_test: hints)
    c.poll.settle_window_s = 0;
    c.log.level = "error";
    return c;
  }

  // Starts the service and waits for READY=1; returns the API port (0 on failure).
  uint16_t StartService(config::DaemonConfig config) {
    Start(std::move(config));
    if (!notify_.WaitFor("READY=1", 10)) return 0;
    port_ = service_->api_port();
    return port_;
  }

  // Checks `done` until it holds or `seconds` pass (tests/daemon/wait_until.h).
  static bool Eventually(const std::function<bool()>& done, double seconds = 8) {
    return hubwatch::testing::WaitUntil(
        done, std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  }

  bool Healthy() const { return Request(port_, "GET", "/healthz").status == 200; }

  // The sum of every series of metric `name` whose labels include each of `labels`
  // ("status=\"503\""); -1 when /metrics does not answer.
  double Metric(const std::string& name, const std::vector<std::string>& labels = {}) const {
    const HttpResponse r = Request(port_, "GET", "/metrics");
    if (r.status != 200) return -1;
    double sum = 0;
    std::istringstream lines(r.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') continue;
      const size_t space = line.rfind(' ');
      const std::string series = line.substr(0, space);
      if (series != name && !series.starts_with(name + "{")) continue;
      bool match = true;
      for (const std::string& l : labels) match = match && series.find(l) != std::string::npos;
      if (match) sum += std::stod(line.substr(space + 1));
    }
    return sum;
  }

  // The repo as GET /api/v1/repos lists it (null when absent or the API does not answer).
  nlohmann::json RepoState(const std::string& repo) const {
    const HttpResponse r = Request(port_, "GET", "/api/v1/repos");
    if (r.status != 200) return nullptr;
    const nlohmann::json body = r.json();  // (a range over a temporary's member dangles)
    for (const nlohmann::json& j : body["repos"]) {
      if (j["id"] == repo) return j;
    }
    return nullptr;
  }
  std::string StateOf(const std::string& repo) const {
    const nlohmann::json j = RepoState(repo);
    return j.is_object() ? j["state"].get<std::string>() : "";
  }

  // Revision shas of `repo` in the store, newest first ({} when the API does not answer).
  std::vector<std::string> Revisions(const std::string& repo) const {
    const HttpResponse r = Request(port_, "GET", "/api/v1/repos/" + repo + "/revisions?limit=100");
    std::vector<std::string> out;
    if (r.status != 200) return out;
    const nlohmann::json body = r.json();
    for (const nlohmann::json& j : body["revisions"]) out.push_back(j["sha"]);
    return out;
  }
  // Changes of `repo`: kind and path of each.
  std::vector<std::pair<std::string, std::string>> Changes(const std::string& repo) const {
    const HttpResponse r = Request(port_, "GET", "/api/v1/repos/" + repo + "/changes");
    std::vector<std::pair<std::string, std::string>> out;
    if (r.status != 200) return out;
    const nlohmann::json j = r.json();
    for (const nlohmann::json& c : j["changes"]) out.push_back({c["kind"], c.value("path", "")});
    return out;
  }
  size_t ErrorChanges(const std::string& repo) const {
    size_t n = 0;
    for (const auto& [kind, path] : Changes(repo)) n += kind == "error";
    return n;
  }
  std::vector<std::string> Advisories(const std::string& repo) const {
    const HttpResponse r = Request(port_, "GET", "/api/v1/advisories?repo=" + repo);
    std::vector<std::string> out;
    if (r.status != 200) return out;
    const nlohmann::json body = r.json();
    for (const nlohmann::json& a : body["advisories"]) out.push_back(a["id"]);
    return out;
  }

  // How many commits a fixture repo has (fakehub serves them all in static mode).
  static size_t FixtureCommits(const std::string& repo) {
    std::ifstream in(std::string(HUBWATCH_FIXTURES_DIR) + "/hub/" + repo + "/repo.json");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() ? j["commits"].size() : 0;
  }

  // Everything of `repo` arrived: every fixture commit is a revision and nothing is an `error`
  // change. Waits for it.
  bool AllArrived(const std::string& repo, double seconds = 8) {
    const size_t commits = FixtureCommits(repo);
    return Eventually([&] { return Revisions(repo).size() == commits && StateOf(repo) == "ok"; },
                      seconds);
  }

  fakehub::FaultRule Fault(fakehub::FaultAction action, const std::string& path_regex,
                           int times = -1) {
    fakehub::FaultRule rule;
    rule.server = "any";
    rule.action = action;
    rule.path_regex = path_regex;
    rule.times = times;
    return rule;
  }

  uint16_t port_ = 0;
};

// The fault paths of kRepo.
inline std::string RefsPath(const std::string& repo) { return "/api/models/" + repo + "/refs"; }
inline std::string TreePath(const std::string& repo) { return "/api/models/" + repo + "/tree/"; }

}  // namespace hubwatch::service::testing

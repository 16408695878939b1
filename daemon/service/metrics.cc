#include "daemon/service/metrics.h"

#include <algorithm>
#include <cstdio>
#include <variant>

namespace hubwatch::service {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string LabelText(const Labels& labels, const std::string& extra = "") {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=\"" + Escape(v) + "\"";
  if (!extra.empty()) out += (out.empty() ? "" : ",") + extra;
  return out.empty() ? "" : "{" + out + "}";
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  counts_.assign(bounds_.size() + 1, 0);
}

void Histogram::Observe(double v) {
  const size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard lock(mu_);
  ++counts_[i];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  std::lock_guard lock(mu_);
  Snapshot s{bounds_, {}, sum_, count_};
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  return s;
}

struct Metrics::Family {
  std::string help;
  std::string type;  // counter, gauge, histogram
  std::map<Labels, std::variant<std::unique_ptr<Counter>, std::unique_ptr<Gauge>,
                                std::unique_ptr<Histogram>>>
      series;
};

Metrics::Metrics() = default;
Metrics::~Metrics() = default;

Counter& Metrics::counter(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& f = families_[name];
  if (!f) f = std::make_unique<Family>(Family{help, "counter", {}});
  auto& slot = f->series[labels];
  if (slot.index() != 0 || !std::get<0>(slot)) slot = std::make_unique<Counter>();
  return *std::get<0>(slot);
}

Gauge& Metrics::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& f = families_[name];
  if (!f) f = std::make_unique<Family>(Family{help, "gauge", {}});
  auto& slot = f->series[labels];
  if (slot.index() != 1) slot = std::make_unique<Gauge>();
  return *std::get<1>(slot);
}

Histogram& Metrics::histogram(const std::string& name, const std::string& help,
                              std::vector<double> upper_bounds, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& f = families_[name];
  if (!f) f = std::make_unique<Family>(Family{help, "histogram", {}});
  auto& slot = f->series[labels];
  if (slot.index() != 2) slot = std::make_unique<Histogram>(std::move(upper_bounds));
  return *std::get<2>(slot);
}

void Metrics::BeforeRender(std::function<void()> refresh) {
  std::lock_guard lock(mu_);
  refreshes_.push_back(std::move(refresh));
}

std::string Metrics::RenderPrometheus() const {
  std::vector<std::function<void()>> refreshes;
  {
    std::lock_guard lock(mu_);
    refreshes = refreshes_;
  }
  for (const auto& refresh : refreshes) refresh();  // they set gauges: not under mu_
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += "# HELP " + name + " " + f->help + "\n# TYPE " + name + " " + f->type + "\n";
    for (const auto& [labels, series] : f->series) {
      if (const auto* c = std::get_if<0>(&series)) {
        out += name + LabelText(labels) + " " + std::to_string((*c)->value()) + "\n";
      } else if (const auto* g = std::get_if<1>(&series)) {
        out += name + LabelText(labels) + " " + Num((*g)->value()) + "\n";
      } else if (const auto* h = std::get_if<2>(&series)) {
        const Histogram::Snapshot s = (*h)->snapshot();
        for (size_t i = 0; i < s.bounds.size(); ++i) {
          out += name + "_bucket" + LabelText(labels, "le=\"" + Num(s.bounds[i]) + "\"") + " " +
                 std::to_string(s.cumulative[i]) + "\n";
        }
        out += name + "_bucket" + LabelText(labels, "le=\"+Inf\"") + " " +
               std::to_string(s.cumulative.back()) + "\n";
        out += name + "_sum" + LabelText(labels) + " " + Num(s.sum) + "\n";
        out += name + "_count" + LabelText(labels) + " " + std::to_string(s.count) + "\n";
      }
    }
  }
  return out;
}

}  // namespace hubwatch::service

#pragma once

// Metrics: the daemon's counters, gauges and histograms, rendered as Prometheus text for
// GET /metrics. Metrics are created on first use by name + labels and live as long as the
// registry. Thread safety: every method may be called from any thread (atomics and a mutex on
// creation); references returned stay valid.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace hubwatch::service {

using Labels = std::vector<std::pair<std::string, std::string>>;  // in a stable order

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  ~Metrics();
  // `help` is used the first time a name is seen.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help,
                       std::vector<double> upper_bounds, const Labels& labels = {});

  // `refresh` runs at the start of every RenderPrometheus, to set gauges whose source is read
  // rather than pushed (queue lengths). REQUIRES: refresh is safe on every thread that renders
  // (the daemon renders only on its network thread, in the API).
  void BeforeRender(std::function<void()> refresh);

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;

 private:
  struct Family;
  std::vector<std::function<void()>> refreshes_;  // guarded by mu_
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Family>> families_;
};

}  // namespace hubwatch::service

#include "tracker/diff/unified_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hubwatch::diff {
namespace {

// Lines with their newline; a last line without one keeps none, so "a" and "a\n" differ.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

enum class Op : char { kEqual = ' ', kRemove = '-', kAdd = '+' };
struct Edit {
  Op op;
  size_t old_line;  // index into the old lines (kEqual, kRemove)
  size_t new_line;  // index into the new lines (kEqual, kAdd)
};

// Myers' greedy shortest edit script for a[a0, a0 + n) -> b[b0, b0 + m), appended to script;
// false when it needs more than max_d edits. Keeps a snapshot of the frontier per step (about
// max_d^2 ints at worst) to walk back.
bool Myers(const std::vector<std::string_view>& a, size_t a0, size_t n,
           const std::vector<std::string_view>& b, size_t b0, size_t m, size_t max_d,
           std::vector<Edit>& script) {
  using Index = long long;
  const Index N = static_cast<Index>(n);
  const Index M = static_cast<Index>(m);
  const Index max = static_cast<Index>(max_d);
  const Index offset = max + 1;
  std::vector<Index> v(static_cast<size_t>(2 * max + 3), 0);
  std::vector<std::vector<int32_t>> trace;  // trace[d][k + d]: v[k] before step d
  auto at = [&](Index k) -> Index& { return v[static_cast<size_t>(offset + k)]; };
  for (Index d = 0; d <= max; ++d) {
    std::vector<int32_t>& snapshot = trace.emplace_back(static_cast<size_t>(2 * d + 1));
    for (Index k = -d; k <= d; ++k)
      snapshot[static_cast<size_t>(k + d)] = static_cast<int32_t>(at(k));
    for (Index k = -d; k <= d; k += 2) {
      Index x = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? at(k + 1) : at(k - 1) + 1;
      Index y = x - k;
      while (x < N && y < M && a[a0 + static_cast<size_t>(x)] == b[b0 + static_cast<size_t>(y)]) {
        ++x;
        ++y;
      }
      at(k) = x;
      if (x < N || y < M) continue;
      // Walk back from (N, M) to (0, 0).
      std::vector<Edit> reversed;
      Index cx = N;
      Index cy = M;
      auto equal = [&]() {
        --cx;
        --cy;
        reversed.push_back(
            {Op::kEqual, a0 + static_cast<size_t>(cx), b0 + static_cast<size_t>(cy)});
      };
      for (Index e = d; e > 0; --e) {
        const std::vector<int32_t>& previous = trace[static_cast<size_t>(e)];
        auto pv = [&](Index kk) {
          return static_cast<Index>(previous[static_cast<size_t>(kk + e)]);
        };
        const Index ck = cx - cy;
        const bool down = ck == -e || (ck != e && pv(ck - 1) < pv(ck + 1));
        const Index pk = down ? ck + 1 : ck - 1;
        const Index px = pv(pk);
        const Index py = px - pk;
        const Index sx = down ? px : px + 1;  // where the snake of step e starts
        while (cx > sx && cy > (down ? py + 1 : py)) equal();
        if (down) {
          --cy;
          reversed.push_back(
              {Op::kAdd, a0 + static_cast<size_t>(cx), b0 + static_cast<size_t>(cy)});
        } else {
          --cx;
          reversed.push_back(
              {Op::kRemove, a0 + static_cast<size_t>(cx), b0 + static_cast<size_t>(cy)});
        }
      }
      while (cx > 0 && cy > 0) equal();
      script.insert(script.end(), reversed.rbegin(), reversed.rend());
      return true;
    }
  }
  return false;
}

std::string Range(size_t start, size_t length) {
  if (length == 0) return std::to_string(start) + ",0";
  if (length == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(length);
}

void AppendLine(char mark, std::string_view line, std::string& out) {
  out += mark;
  if (!line.empty() && line.back() == '\n') {
    out.append(line);
  } else {
    out.append(line);
    out += "\n\\ No newline at end of file\n";
  }
}

std::string WithoutNewline(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return std::string(line);
}

}  // namespace

UnifiedDiff DiffLines(std::string_view before, std::string_view after,
                      std::string_view before_label, std::string_view after_label, size_t context) {
  UnifiedDiff result;
  if (before == after) return result;
  const std::vector<std::string_view> a = SplitLines(before);
  const std::vector<std::string_view> b = SplitLines(after);

  // The edit script: common prefix, the middle, common suffix.
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<Edit> script;
  for (size_t i = 0; i < prefix; ++i) script.push_back({Op::kEqual, i, i});
  const size_t n = a.size() - prefix - suffix;
  const size_t m = b.size() - prefix - suffix;
  if (!Myers(a, prefix, n, b, prefix, m, std::min(kMaxEditDistance, n + m), script)) {
    for (size_t i = 0; i < n; ++i) script.push_back({Op::kRemove, prefix + i, prefix});
    for (size_t j = 0; j < m; ++j) script.push_back({Op::kAdd, prefix + n, prefix + j});
  }
  for (size_t i = 0; i < suffix; ++i) {
    script.push_back({Op::kEqual, a.size() - suffix + i, b.size() - suffix + i});
  }

  // Hunks: each run of changes with `context` equal lines around it, merged when close.
  result.text = "--- " + std::string(before_label) + "\n+++ " + std::string(after_label) + "\n";
  size_t i = 0;
  while (i < script.size()) {
    while (i < script.size() && script[i].op == Op::kEqual) ++i;
    if (i == script.size()) break;
    const size_t first_change = i;
    size_t last_change = i;  // extend while the next change is within 2 * context equal lines
    size_t equal_run = 0;
    for (size_t j = i + 1; j < script.size(); ++j) {
      if (script[j].op == Op::kEqual) {
        if (++equal_run > 2 * context) break;
        continue;
      }
      last_change = j;
      equal_run = 0;
    }
    const size_t begin = first_change >= context ? first_change - context : 0;
    const size_t end = std::min(script.size(), last_change + 1 + context);
    const size_t old_start = script[begin].old_line;
    const size_t new_start = script[begin].new_line;
    size_t old_length = 0;
    size_t new_length = 0;
    std::string body;
    for (size_t k = begin; k < end; ++k) {
      const Edit& edit = script[k];
      if (edit.op != Op::kAdd) ++old_length;
      if (edit.op != Op::kRemove) ++new_length;
      AppendLine(static_cast<char>(edit.op),
                 edit.op == Op::kAdd ? b[edit.new_line] : a[edit.old_line], body);
      if (edit.op == Op::kAdd) {
        ++result.lines_added;
        if (result.lines_added == 1) result.first_added = WithoutNewline(b[edit.new_line]);
      } else if (edit.op == Op::kRemove) {
        ++result.lines_removed;
        if (result.lines_removed == 1) result.first_removed = WithoutNewline(a[edit.old_line]);
      }
    }
    result.text += "@@ -" + Range(old_start, old_length) + " +" + Range(new_start, new_length) +
                   " @@\n" + body;
    ++result.hunks;
    i = end;
  }
  return result;
}

}  // namespace hubwatch::diff

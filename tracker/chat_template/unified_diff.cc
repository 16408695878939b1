#include "tracker/chat_template/unified_diff.h"

#include <algorithm>
#include <vector>

namespace hubwatch::chat_template {
namespace {

// Splits into lines that keep their '\n' (the last may lack it).
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end + 1 - start));
    start = end + 1;
  }
  return lines;
}

enum class Op { kEqual, kDelete, kInsert };

constexpr int kMaxEditDistance = 1000;

// Myers' O(ND) shortest edit script; falls back to delete-all + insert-all past
// kMaxEditDistance.
std::vector<Op> EditScript(const std::vector<std::string_view>& a,
                           const std::vector<std::string_view>& b) {
  const int n = static_cast<int>(a.size());
  const int m = static_cast<int>(b.size());
  const int max = std::min(n + m, kMaxEditDistance);
  const int offset = max + 1;
  std::vector<int> v(static_cast<size_t>(2 * max + 3), 0);
  std::vector<std::vector<int>> trace;
  int found_d = -1;
  for (int d = 0; d <= max && found_d < 0; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
  }
  std::vector<Op> ops;
  if (found_d < 0) {
    ops.assign(static_cast<size_t>(n), Op::kDelete);
    ops.insert(ops.end(), static_cast<size_t>(m), Op::kInsert);
    return ops;
  }
  int x = n;
  int y = m;
  for (int d = found_d; d > 0; --d) {
    const std::vector<int>& prev = trace[static_cast<size_t>(d)];
    const int k = x - y;
    const bool down = k == -d || (k != d && prev[offset + k - 1] < prev[offset + k + 1]);
    const int prev_k = down ? k + 1 : k - 1;
    const int prev_x = prev[offset + prev_k];
    const int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      ops.push_back(Op::kEqual);
      --x, --y;
    }
    ops.push_back(down ? Op::kInsert : Op::kDelete);
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    ops.push_back(Op::kEqual);
    --x, --y;
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

std::string Range(int start, int count) {
  if (count == 0) return std::to_string(start) + ",0";
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

void AppendLine(std::string& out, char prefix, std::string_view line) {
  out.push_back(prefix);
  out.append(line);
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string UnifiedDiff(std::string_view before, std::string_view after,
                        std::string_view before_label, std::string_view after_label, int context) {
  if (before == after) return "";
  const std::vector<std::string_view> a = Lines(before);
  const std::vector<std::string_view> b = Lines(after);
  const std::vector<Op> ops = EditScript(a, b);

  std::string out;
  out += "--- ";
  out.append(before_label);
  out += "\n+++ ";
  out.append(after_label);
  out += "\n";

  // Positions in a and b at each op index.
  std::vector<int> ai(ops.size() + 1), bi(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    ai[i + 1] = ai[i] + (ops[i] != Op::kInsert ? 1 : 0);
    bi[i + 1] = bi[i] + (ops[i] != Op::kDelete ? 1 : 0);
  }
  size_t i = 0;
  while (i < ops.size()) {
    if (ops[i] == Op::kEqual) {
      ++i;
      continue;
    }
    // A hunk: from `context` equal ops before the change to `context` after the last change
    // that is within 2 * context equal ops of the previous one.
    const size_t begin = i >= static_cast<size_t>(context) ? i - static_cast<size_t>(context) : 0;
    const size_t hunk_begin = begin;
    size_t end = i;
    while (true) {
      while (end < ops.size() && ops[end] != Op::kEqual) ++end;
      size_t equal_run = 0;
      while (end + equal_run < ops.size() && ops[end + equal_run] == Op::kEqual) ++equal_run;
      if (end + equal_run < ops.size() && equal_run <= 2 * static_cast<size_t>(context)) {
        end += equal_run;
        continue;
      }
      end += std::min(equal_run, static_cast<size_t>(context));
      break;
    }
    const int a_start = ai[hunk_begin];
    const int b_start = bi[hunk_begin];
    out += "@@ -" + Range(a_start, ai[end] - a_start) + " +" + Range(b_start, bi[end] - b_start) +
           " @@\n";
    for (size_t k = hunk_begin; k < end; ++k) {
      switch (ops[k]) {
        case Op::kEqual:
          AppendLine(out, ' ', a[static_cast<size_t>(ai[k])]);
          break;
        case Op::kDelete:
          AppendLine(out, '-', a[static_cast<size_t>(ai[k])]);
          break;
        case Op::kInsert:
          AppendLine(out, '+', b[static_cast<size_t>(bi[k])]);
          break;
      }
    }
    i = end;
  }
  return out;
}

}  // namespace hubwatch::chat_template

// Discovery on real open-source files nobody here wrote, against a hand count of their model
// references written before the scanner ran on them (expected.tsv; each folder's SOURCES.md lists
// the repositories, commits and licences). Two sets, measured and reported separately:
//   real      tests/fixtures/audit/real: read while the scanner was written (not held out);
//   heldout   tests/fixtures/audit/heldout: from other repositories, read by nobody while the
//             scanner was written, counted by hand before its first run on them.
// The goals, on each set: recall >= 95%, precision >= 98%.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/audit/scan_tree.h"

namespace hubwatch::audit {
namespace {

struct RealSet {
  const char* name;       // the folder under tests/fixtures/audit, and the test's name
  size_t min_references;  // fewer in expected.tsv means it was not found or is truncated
};

void PrintTo(const RealSet& set, std::ostream* os) { *os << set.name; }

std::string SetDir(const RealSet& set) {
  return std::string(HUBWATCH_FIXTURES_DIR) + "/audit/" + set.name;
}

struct Expected {
  std::vector<std::string> references;  // "file:line repo@revision"
  std::vector<std::string> unresolved;  // "file:line"
};

Expected ReadHandCount(const std::string& dir) {
  Expected e;
  std::ifstream in(dir + "/expected.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols[0] == "ref") {
      e.references.push_back(cols[1] + ":" + cols[2] + " " + cols[3] +
                             (cols.size() > 4 && !cols[4].empty() ? "@" + cols[4] : ""));
    } else if (cols[0] == "unresolved") {
      e.unresolved.push_back(cols[1] + ":" + cols[2]);
    }
  }
  return e;
}

// |a ∩ b| as multisets; prints what is only in `a` under `label`.
size_t Common(std::vector<std::string> a, std::vector<std::string> b, const char* label) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::string> both, only;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
  for (const std::string& s : only) std::cout << "  " << label << ": " << s << "\n";
  return both.size();
}

class RealCode : public ::testing::TestWithParam<RealSet> {};

TEST_P(RealCode, RecallAndPrecisionAgainstTheHandCount) {
  const RealSet& set = GetParam();
  const std::string dir = SetDir(set);
  Expected expected = ReadHandCount(dir);
  ASSERT_GE(expected.references.size(), set.min_references)
      << "expected.tsv not found or short: " << dir;
  Result<ScanReport> report = ScanTree({dir}, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::vector<std::string> found;
  for (const ModelReference& r : report->references) {
    found.push_back(r.file + ":" + std::to_string(r.line) + " " + r.repo_id +
                    (r.revision.empty() ? "" : "@" + r.revision));
  }
  std::vector<std::string> found_unresolved;
  for (const Unresolved& u : report->unresolved) {
    found_unresolved.push_back(u.file + ":" + std::to_string(u.line));
  }
  size_t hits = Common(expected.references, found, "missed");
  Common(found, expected.references, "false");
  size_t unresolved_hits = Common(expected.unresolved, found_unresolved, "unresolved missed");
  Common(found_unresolved, expected.unresolved, "unresolved extra");
  double recall = static_cast<double>(hits) / static_cast<double>(expected.references.size());
  double precision =
      found.empty() ? 0 : static_cast<double>(hits) / static_cast<double>(found.size());
  std::cout << set.name << " code: " << report->files_scanned << " files scanned; references found "
            << found.size() << ", expected " << expected.references.size() << ", matched " << hits
            << ", false " << found.size() - hits << "; recall " << recall * 100 << "%, precision "
            << precision * 100 << "%; unresolved found " << found_unresolved.size() << ", expected "
            << expected.unresolved.size() << ", matched " << unresolved_hits << "\n";
  EXPECT_GE(recall, 0.95);
  EXPECT_GE(precision, 0.98);
  EXPECT_GE(static_cast<double>(unresolved_hits),
            0.9 * static_cast<double>(expected.unresolved.size()));
  EXPECT_TRUE(report->problems.empty());
}

INSTANTIATE_TEST_SUITE_P(Sets, RealCode,
                         ::testing::Values(RealSet{"real", 25}, RealSet{"heldout", 20}),
                         [](const ::testing::TestParamInfo<RealSet>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace hubwatch::audit

// audit_bench: ScanTree over a generated 100,000-file tree (BENCHMARKS.md). The goal: at most
// 10 s and 64 MiB peak RSS on a 2-core machine.
//
//   audit_bench [FILES] [DIRECTORY]
//
// Writes FILES files (default 100,000) under a new temporary directory in DIRECTORY (default
// $TMPDIR or /tmp) - Python, YAML, JSON, shell, Markdown, text and C++ sources of realistic
// sizes, one in ten with a model reference, with a .gitignore and an ignored build directory
// - then times one ScanTree over it (page cache warm: the files were just written), prints the
// wall time, the counts and the peak RSS (getrusage ru_maxrss), and removes the tree.

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/audit/scan_tree.h"

namespace {

namespace fs = std::filesystem;
using hubwatch::audit::ScanReport;
using hubwatch::audit::ScanTree;

// Filler lines of a source of `kind`, about `bytes` long.
std::string Filler(const std::string& comment, size_t bytes, unsigned seed) {
  std::string out;
  unsigned n = seed;
  while (out.size() < bytes) {
    n = n * 1103515245u + 12345u;
    out += comment + " line " + std::to_string(n % 100000) +
           " of generated text, value = " + std::to_string(n % 977) + "\n";
  }
  return out;
}

std::string FileText(int i, std::string* name) {
  unsigned seed = static_cast<unsigned>(i);
  bool reference = i % 10 == 0;
  std::string model = "org" + std::to_string(i % 97) + "/model-" + std::to_string(i % 1009);
  switch (i % 20) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
      *name = "mod_" + std::to_string(i) + ".py";
      return "import torch\nfrom transformers import AutoModel\n" + Filler("#", 3000, seed) +
             (reference ? "m = AutoModel.from_pretrained(\"" + model + "\", revision=\"main\")\n"
                        : "") +
             "def f(x):\n    return x * 2\n";
    case 6:
    case 7:
      *name = "config_" + std::to_string(i) + ".yaml";
      return (reference ? "base_model: " + model + "\n" : "") + "learning_rate: 0.0001\n" +
             Filler("#", 800, seed);
    case 8:
      *name = "data_" + std::to_string(i) + ".json";
      return "{\"model_name_or_path\": \"" + model + "\", \"items\": [" + std::string(1500, '1') +
             "]}\n";
    case 9:
      *name = "run_" + std::to_string(i) + ".sh";
      return "#!/bin/bash\nset -e\n" + Filler("#", 600, seed) + "vllm serve " + model +
             " \\\n  --port 8000\n";
    case 10:
    case 11:
    case 12:
      *name = "doc_" + std::to_string(i) + ".md";
      return Filler("*", 2500, seed);
    case 13:
    case 14:
      *name = "notes_" + std::to_string(i) + ".txt";
      return Filler("-", 1200, seed);
    default:
      *name = "src_" + std::to_string(i) + ".cc";
      return Filler("//", 4000, seed);
  }
}

long PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  int files = argc > 1 ? std::atoi(argv[1]) : 100000;
  const char* tmp = std::getenv("TMPDIR");
  fs::path base = argc > 2 ? fs::path(argv[2]) : fs::path(tmp != nullptr ? tmp : "/tmp");
  std::string pattern = (base / "audit-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  fs::path root = pattern;
  auto start = std::chrono::steady_clock::now();
  std::ofstream(root / ".gitignore") << "build/\n*.pyc\n";
  uint64_t bytes = 0;
  for (int i = 0; i < files; ++i) {
    // 100 files a directory, two levels: d12/d1234/...; every 50th directory is build/ output.
    fs::path dir = root / ("d" + std::to_string(i / 10000)) / ("d" + std::to_string(i / 100));
    if ((i / 100) % 50 == 49) dir /= "build";
    if (i % 100 == 0) fs::create_directories(dir);
    std::string name;
    std::string text = FileText(i, &name);
    std::ofstream(dir / name, std::ios::binary) << text;
    bytes += text.size();
  }
  double generate_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long rss_before = PeakRssKiB();

  start = std::chrono::steady_clock::now();
  hubwatch::Result<ScanReport> report = ScanTree({root.string()}, {});
  double scan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!report.ok()) {
    std::fprintf(stderr, "ScanTree: %s\n", report.error().message.c_str());
    return 1;
  }
  std::printf("tree: %d files, %.1f MB, generated in %.1f s\n", files,
              static_cast<double>(bytes) / 1e6, generate_s);
  std::printf(
      "scan: %.2f s wall; %lld files scanned, %lld skipped; %zu references, %zu unresolved, "
      "%zu problems\n",
      scan_s, static_cast<long long>(report->files_scanned),
      static_cast<long long>(report->files_skipped), report->references.size(),
      report->unresolved.size(), report->problems.size());
  std::printf("peak RSS: %.1f MiB (%.1f MiB before the scan)\n",
              static_cast<double>(PeakRssKiB()) / 1024, static_cast<double>(rss_before) / 1024);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}

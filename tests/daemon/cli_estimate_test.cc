#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "daemon/commands.h"
#include "hubwatch/version.h"
#include "tests/estimator/test_util.h"

namespace hubwatch::cli {
namespace {

const std::string kFixtures = HUBWATCH_FIXTURES_DIR;
const std::string kGemma = kFixtures + "/models/google__gemma-2-9b-it.config.json";

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome Estimate(Args args) {
  std::ostringstream out, err;
  const int code = RunEstimate(args, out, err);
  return {code, out.str(), err.str()};
}

// A temporary file holding `content`, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    path_ = ::testing::TempDir() + "hubwatch_cli_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
            std::to_string(counter_++) + ".json";
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

void ExpectOneLineError(const Outcome& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("hubwatch estimate: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

TEST(CliEstimate, DefaultReportHasEverySection) {
  const Outcome r = Estimate({kGemma});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty());
  for (const char* section : {"Parameters", "KV cache", "Memory (batch 1)", "Fit per card",
                              "Training cost", "Structure", "Lints", "Assumptions"}) {
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
  }
  EXPECT_NE(r.out.find("9,241,705,984"), std::string::npos);
}

TEST(CliEstimate, JsonIsTheMachineForm) {
  const Outcome r = Estimate({kGemma, "--json", "--preset", "seed"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "hubwatch.estimate/1");
  EXPECT_EQ(j["params"]["total"], 9241705984u);
  EXPECT_EQ(j["params"]["on_disk"], 9241705984u);
  EXPECT_EQ(j["params"]["active"], 9241705984u);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 344064);
  EXPECT_EQ(j["memory"].size(), 4u);
  EXPECT_EQ(j["fit"].size(), 10u);
  for (const nlohmann::json& f : j["fit"]) {
    if (f["card"] == "a100-80gb") {
      EXPECT_EQ(f["modes"]["serve"]["max_batch"], 36);
    }
  }
}

TEST(CliEstimate, MarkdownTwinHasTheSameSections) {
  const Outcome r = Estimate({kGemma, "--markdown"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# hubwatch estimate", 0), 0u);
  EXPECT_NE(r.out.find("## Fit per card"), std::string::npos);
  EXPECT_NE(r.out.find("| --- |"), std::string::npos);
}

TEST(CliEstimate, OptionsReachTheEstimate) {
  const Outcome r = Estimate({kGemma, "--json", "--seq", "4096", "--batch", "2", "--context",
                              "8192", "--lora-rank", "8", "--lora-targets", "q_proj,v_proj",
                              "--cards", "h100,l4,mine=48:200:1.5", "--set", "serve.kv_bytes=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"]["seq"], 4096);
  EXPECT_EQ(j["workload"]["batch"], 2);
  EXPECT_EQ(j["kv_cache"]["context"], 8192);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 344064 / 2);
  // q_proj 3584 -> 4096 and v_proj 3584 -> 2048 at rank 8, 42 layers.
  EXPECT_EQ(j["params"]["lora_adapter"], 42u * 8u * ((3584 + 4096) + (3584 + 2048)));
  ASSERT_EQ(j["fit"].size(), 3u);
  EXPECT_EQ(j["fit"][2]["card"], "mine");
  EXPECT_EQ(j["fit"][2]["memory_gb"], 48.0);
}

TEST(CliEstimate, HeaderFilesInBothForms) {
  const std::string json_header = kFixtures + "/safetensors/gpt2.header.json";
  std::ifstream in(json_header, std::ios::binary);
  std::string header((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  TempFile prefixed(file + header + std::string(64, '\0'));  // a truncated .safetensors file
  for (const std::string& path : {json_header, prefixed.path()}) {
    const Outcome r = Estimate({kFixtures + "/models/openai-community__gpt2.config.json",
                                "--safetensors-header", path, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["checkpoint"]["parameter_delta"], 0);
    EXPECT_EQ(j["checkpoint"]["buffer_elements"], 12582912);
  }
}

TEST(CliEstimate, BadInputIsOneClearLineAndExitTwo) {
  const nlohmann::json base = nlohmann::json::parse(std::ifstream(kGemma));
  auto with = [&](const char* key, nlohmann::json value) {
    nlohmann::json c = base;
    if (value.is_null()) {
      c.erase(key);
    } else {
      c[key] = value;
    }
    return c.dump();
  };
  TempFile not_json("{\"model_type\": \"gemma2\", ");
  TempFile missing(with("hidden_size", nullptr));
  TempFile zero(with("num_hidden_layers", 0));
  TempFile negative(with("intermediate_size", -14336));
  TempFile absurd(with("vocab_size", 1000000000000));
  TempFile unknown(with("model_type", "rwkv"));
  TempFile array("[1, 2, 3]");
  ExpectOneLineError(Estimate({not_json.path()}), "not valid JSON");
  ExpectOneLineError(Estimate({missing.path()}), "missing required key hidden_size");
  ExpectOneLineError(Estimate({zero.path()}),
                     "num_hidden_layers must be a positive integer, got 0");
  ExpectOneLineError(Estimate({negative.path()}), "intermediate_size must be a positive integer");
  ExpectOneLineError(Estimate({absurd.path()}), "vocab_size 1000000000000 is absurd");
  ExpectOneLineError(Estimate({unknown.path()}), "unsupported architecture: model_type \"rwkv\"");
  ExpectOneLineError(Estimate({array.path()}), "not a JSON object");
  ExpectOneLineError(Estimate({"/nonexistent/config.json"}), "cannot open");
  ExpectOneLineError(Estimate({}), "missing CONFIG.json");
  ExpectOneLineError(Estimate({kGemma, "--seq", "0"}), "--seq needs a positive integer");
  ExpectOneLineError(Estimate({kGemma, "--batch"}), "--batch needs a value");
  ExpectOneLineError(Estimate({kGemma, "--frobnicate"}), "unknown option --frobnicate");
  ExpectOneLineError(Estimate({kGemma, "--set", "train.nope=1"}),
                     "unknown assumption 'train.nope'");
  ExpectOneLineError(Estimate({kGemma, "--set", "cost.mfu=7"}), "is not a number in [0.01, 1]");
  ExpectOneLineError(Estimate({kGemma, "--cards", "a100,voodoo5"}), "unknown card 'voodoo5'");
  ExpectOneLineError(Estimate({kGemma, "--preset", "fast"}), "unknown preset 'fast'");
  ExpectOneLineError(Estimate({kGemma, "--safetensors-header", not_json.path()}),
                     "safetensors header");
}

// Whatever was typed, an error is one line that quotes at most about 80 bytes of it (issue 28:
// `--set <100 KB>=1` printed 100,590 bytes).
TEST(CliEstimate, ErrorsQuoteArgumentsClipped) {
  const std::string huge(100'000, 'x');
  for (const Args& args :
       {Args{kGemma, "--set", huge + "=1"}, Args{kGemma, "--set", "cost.mfu=" + huge},
        Args{kGemma, "--cards", huge}, Args{kGemma, "--preset", huge}, Args{kGemma, "--" + huge},
        Args{kGemma, "--seq", huge}, Args{kGemma, huge}, Args{huge}}) {
    const Outcome o = Estimate(args);
    EXPECT_NE(o.code, 0);
    // The message may list what is valid (the assumptions' names); the argument is clipped.
    EXPECT_LT(o.err.size(), 1024u) << o.err.substr(0, 400);
    EXPECT_EQ(o.err.find(std::string(100, huge[0])), std::string::npos) << o.err.substr(0, 400);
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line";
  }
}

// Without config.json, or with one of an architecture nobody models, a checkpoint header is
// enough: the estimate from its tensors (issue 29).
TEST(CliEstimate, AHeaderAloneIsEstimatedFromItsTensors) {
  const std::string header = kFixtures + "/safetensors/gpt2.header.json";
  const Outcome o = Estimate({"--safetensors-header", header, "--json"});
  ASSERT_EQ(o.code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["model"]["source"], "checkpoint_tensors");
  EXPECT_EQ(j["params"]["total"], 124439808u);
  EXPECT_EQ(j["params"]["on_disk"], 137022720u);
  const Outcome text = Estimate({"--safetensors-header", header});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("from the checkpoint's tensors: structure not modelled"),
            std::string::npos);
  ExpectOneLineError(Estimate({"--batch", "2"}), "missing CONFIG.json");
}

// The API caps lora_rank at 65,536; so does the CLI (the rank used to wrap the adapter count
// to 18,446,744,073,706,930,176 with exit 0). A target the architecture lacks used to give 0
// adapter parameters silently.
TEST(CliEstimate, LoraRankAndTargetsAreChecked) {
  const std::string kLlama3 = kFixtures + "/models/meta-llama__Meta-Llama-3-8B.config.json";
  ExpectOneLineError(Estimate({kLlama3, "--lora-rank", "9223372036854775807"}),
                     "--lora-rank must be between 1 and 65536, got 9223372036854775807");
  ExpectOneLineError(Estimate({kLlama3, "--lora-rank", "65537"}),
                     "--lora-rank must be between 1 and 65536");
  EXPECT_EQ(Estimate({kLlama3, "--lora-rank", "65536"}).code, 0);
  ExpectOneLineError(Estimate({kLlama3, "--lora-targets", "nonexistent"}),
                     "--lora-targets: 'nonexistent' is not a linear module of llama (known: "
                     "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
  const Outcome ok = Estimate({kLlama3, "--json", "--lora-targets", "q_proj,v_proj"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["params"]["lora_adapter"], 32 * 16 * (8192 + 5120));
}

// A 10 MB config.json listing 1.4M eos ids: `hubwatch estimate` wrote 307 MB and peaked at
// 1.8 GB. One lint now, and every output form stays small.
TEST(CliEstimate, OutputIsBoundedForAMillionTokenIds) {
  TempFile f(testing::ConfigWithEosIds(1'400'000));
  for (const char* format : {"--json", "--markdown", "--text"}) {
    SCOPED_TRACE(format);
    Args args = {f.path()};
    if (std::string(format) != "--text") args.push_back(format);
    const Outcome r = Estimate(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_LT(r.out.size(), 64u << 10);
    EXPECT_NE(r.out.find("1,400,000 token ids outside the vocabulary"), std::string::npos);
  }
  // 2^64 - 1 is shown as written, not as -1.
  nlohmann::json c = nlohmann::json::parse(testing::ConfigWithEosIds(1));
  c["eos_token_id"] = nlohmann::json::parse("18446744073709551615");
  TempFile huge(c.dump());
  const Outcome r = Estimate({huge.path()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("eos_token_id 18446744073709551615 is outside"), std::string::npos);
}

TEST(CliEstimate, AssumeReadsAnUnsupportedTypeAndSaysSo) {
  nlohmann::json c = nlohmann::json::parse(
      std::ifstream(kFixtures + "/models/meta-llama__Meta-Llama-3-8B.config.json"));
  c["model_type"] = "llama_next";
  TempFile f(c.dump());
  const Outcome r = Estimate({f.path(), "--assume", "llama"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("APPROXIMATE"), std::string::npos);
  EXPECT_NE(r.out.find("approximate_architecture"), std::string::npos);
}

TEST(CliEstimate, HelpExplainsEveryOption) {
  const Outcome r = Estimate({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* option :
       {"--safetensors-header", "--seq", "--batch", "--context", "--lora-rank", "--lora-targets",
        "--cards", "--preset", "--set", "--assume", "--json", "--markdown"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

// The top-level dispatch lives in main.cc, outside the hubwatch_cli library, so these tests run
// the hubwatch executable. Its path comes from HUBWATCH_BINARY when the build defines it, else
// it is the sibling of this test binary: both land in build/bin (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
std::string HubwatchBinary() {
#ifdef HUBWATCH_BINARY
  return HUBWATCH_BINARY;
#else
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("hubwatch") : (self.parent_path() / "hubwatch").string();
#endif
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `hubwatch ARGS...` with stdin closed; its exit code, stdout and stderr.
Outcome RunHubwatch(const Args& args) {
  const std::string binary = HubwatchBinary();
  if (!std::filesystem::exists(binary)) {
    ADD_FAILURE() << "no hubwatch executable at " << binary << " (build the hubwatch target)";
    return {-1, "", ""};
  }
  const std::string base = ::testing::TempDir() + "hubwatch_cli_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string command = ShellQuote(binary);
  for (const std::string& a : args) command += " " + ShellQuote(a);
  command += " </dev/null >" + ShellQuote(base + ".out") + " 2>" + ShellQuote(base + ".err");
  const int status = std::system(command.c_str());
  Outcome r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(base + ".out"),
            Slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

TEST(CliTopLevel, VersionPrintsTheProjectVersion) {
  ASSERT_NE(std::string(kVersion), "");
  const Outcome r = RunHubwatch({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, std::string("hubwatch ") + kVersion + "\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliTopLevel, HelpListsEveryCommandAndOption) {
  const Outcome r = RunHubwatch({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind(std::string("hubwatch ") + kVersion + " - keeps watch", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("usage: hubwatch <command> [options]"), std::string::npos) << r.out;
  for (const char* line : {"\n  estimate ", "\n  chat-template ", "\n  serve ", "\n  poll-once ",
                           "\n  history ", "\n  changes ", "\n  advisories ", "\n  show ",
                           "\n  derivatives ", "\n  --help ", "\n  --version "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing" << line << " in\n" << r.out;
  }
  for (const char* alias : {"-h", "help"}) {
    const Outcome same = RunHubwatch({alias});
    EXPECT_EQ(same.code, 0) << alias;
    EXPECT_EQ(same.out, r.out) << alias;
  }
}

TEST(CliTopLevel, NoCommandOrAnUnknownOneIsExitTwo) {
  const Outcome none = RunHubwatch({});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("usage: hubwatch <command> [options]"), std::string::npos) << none.err;
  const Outcome unknown = RunHubwatch({"frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err, "hubwatch: unknown command 'frobnicate' (see hubwatch --help)\n");
}

TEST(CliTopLevel, CommandsGetTheirArgumentsAndExitCode) {
  const Outcome help = RunHubwatch({"estimate", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, Estimate({"--help"}).out);
  const Outcome json = RunHubwatch({"estimate", kGemma, "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["params"]["total"], 9241705984u);
  const Outcome bad = RunHubwatch({"estimate", kGemma, "--frobnicate"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown option --frobnicate"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace hubwatch::cli

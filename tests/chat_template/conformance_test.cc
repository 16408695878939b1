// Conformance against @huggingface/jinja: every corpus template x canonical conversation, and
// every feature case, must render byte for byte as the reference did (outputs committed by
// oracle/generate.mjs), and must fail where the reference failed.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/chat_template/testdata.h"
#include "tracker/chat_template/template.h"

namespace hubwatch::chat_template {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const fs::path kTestData = testdata::Dir();
using testdata::ReadFile;

// The clock the oracle froze (oracle/generate.mjs kFixedNow).
RenderOptions OracleOptions() {
  RenderOptions options;
  options.now = CivilTime{2025, 3, 14, 9, 26, 53};
  return options;
}

struct CorpusCase {
  std::string template_id;
  std::string conversation;
  fs::path template_path;
  Json variables;  // template variables overlaid by the conversation
  fs::path expected_output;
  fs::path expected_error;
};

void PrintTo(const CorpusCase& c, std::ostream* os) {
  *os << c.template_id << " x " << c.conversation;
}

std::vector<CorpusCase> LoadCorpus() {
  const fs::path corpus = kTestData / "corpus";
  const Json manifest = Json::parse(ReadFile(corpus / "manifest.json"));
  std::vector<std::pair<std::string, Json>> conversations;
  for (const auto& entry : fs::directory_iterator(corpus / "conversations")) {
    if (entry.path().extension() != ".json") continue;
    conversations.emplace_back(entry.path().stem().string(), Json::parse(ReadFile(entry.path())));
  }
  std::sort(conversations.begin(), conversations.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CorpusCase> cases;
  for (const Json& entry : manifest["templates"]) {
    for (const auto& [name, conversation] : conversations) {
      CorpusCase c;
      c.template_id = entry["id"].get<std::string>();
      c.conversation = name;
      c.template_path = corpus / entry["template"].get<std::string>();
      c.variables = entry["variables"];
      for (const auto& [key, value] : conversation.items()) c.variables[key] = value;
      c.expected_output = corpus / "expected" / c.template_id / (name + ".txt");
      c.expected_error = corpus / "expected" / c.template_id / (name + ".error");
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::string CaseName(const std::string& a, const std::string& b) {
  std::string name = a + "__" + b;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

class CorpusConformance : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(CorpusConformance, RendersLikeTheReference) {
  const CorpusCase& c = GetParam();
  const bool expect_error = fs::exists(c.expected_error);
  ASSERT_TRUE(expect_error || fs::exists(c.expected_output))
      << "no expected output for " << c.template_id << " x " << c.conversation
      << "; run tests/chat_template/oracle (npm run generate)";
  Result<Template> parsed = Template::Parse(ReadFile(c.template_path));
  Result<std::string> rendered =
      parsed.ok() ? parsed->Render(VariablesFromJson(c.variables), OracleOptions())
                  : Result<std::string>(parsed.error());
  if (expect_error) {
    EXPECT_FALSE(rendered.ok()) << "the reference failed with: " << ReadFile(c.expected_error)
                                << "but hubwatch rendered:\n"
                                << rendered.value();
    return;
  }
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  EXPECT_EQ(rendered.value(), ReadFile(c.expected_output));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusConformance, ::testing::ValuesIn(LoadCorpus()),
                         [](const auto& info) {
                           return CaseName(info.param.template_id, info.param.conversation);
                         });

// The chat templates one file of a repository ships: tokenizer_config.json's chat_template (a
// string, or a list of {name, template}), chat_template.jinja, chat_template.json.
std::vector<std::string> TemplatesIn(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name == "chat_template.jinja") return {ReadFile(path)};
  if (name != "tokenizer_config.json" && name != "chat_template.json") return {};
  const Json templates = Json::parse(ReadFile(path)).value("chat_template", Json());
  if (templates.is_string()) return {templates.get<std::string>()};
  std::vector<std::string> out;
  if (templates.is_array()) {
    for (const Json& t : templates) out.push_back(t.at("template").get<std::string>());
  }
  return out;
}

TEST(Corpus, HoldsEveryTemplateOfTheHubFixtures) {
  const fs::path root = kTestData.parent_path().parent_path();  // the repository
  const fs::path corpus = kTestData / "corpus";
  const Json manifest = Json::parse(ReadFile(corpus / "manifest.json"));
  std::map<std::string, std::string> corpus_ids;  // template text -> id
  for (const Json& entry : manifest["templates"]) {
    const std::string text = ReadFile(corpus / entry["template"].get<std::string>());
    corpus_ids.emplace(text, entry["id"].get<std::string>());
    // Each fixture the manifest names carries this very text.
    for (const Json& fixture : entry.value("hub_fixtures", Json::array())) {
      bool found = false;
      for (const std::string& source : TemplatesIn(root / fixture.get<std::string>()))
        found |= source == text;
      EXPECT_TRUE(found) << entry["id"] << " names " << fixture << ", which does not hold it";
    }
  }
  // Every template of every fixture revision (tests/fixtures/hub/<org>/<repo>/files/<version>/).
  size_t fixtures = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root / "tests" / "fixtures" / "hub")) {
    for (const std::string& source : TemplatesIn(entry.path())) {
      ++fixtures;
      EXPECT_TRUE(corpus_ids.contains(source))
          << "the chat template of " << entry.path() << " is not in the conformance corpus";
    }
  }
  EXPECT_GE(fixtures, 18u);
}

struct FeatureCase {
  std::string name;
  std::string source;
  Json context;
  Json expected;           // {"output": ...} or {"error": ...} from the reference
  std::string divergence;  // why hubwatch deliberately differs, if it does
  std::string hubwatch_output;
};

void PrintTo(const FeatureCase& f, std::ostream* os) { *os << f.name; }

std::vector<FeatureCase> LoadFeatures() {
  const Json cases = Json::parse(ReadFile(kTestData / "features" / "cases.json"));
  const Json expected = Json::parse(ReadFile(kTestData / "features" / "expected.json"));
  std::vector<FeatureCase> out;
  for (const Json& c : cases["cases"]) {
    FeatureCase f;
    f.name = c["name"].get<std::string>();
    f.source = c["template"].get<std::string>();
    f.context = c.contains("context") ? c["context"] : Json::object();
    f.expected = expected.contains(f.name) ? expected[f.name] : Json();
    if (c.contains("divergence")) {
      f.divergence = c["divergence"].get<std::string>();
      f.hubwatch_output = c["hubwatch_output"].get<std::string>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

class FeatureConformance : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(FeatureConformance, RendersLikeTheReference) {
  const FeatureCase& f = GetParam();
  ASSERT_TRUE(f.expected.is_object()) << "no expected output; run tests/chat_template/oracle";
  Result<Template> parsed = Template::Parse(f.source);
  Result<std::string> rendered = parsed.ok()
                                     ? parsed->Render(VariablesFromJson(f.context), OracleOptions())
                                     : Result<std::string>(parsed.error());
  if (!f.divergence.empty()) {
    // Documented divergence: the reference output is recorded, hubwatch's is asserted.
    ASSERT_TRUE(rendered.ok()) << rendered.error().message;
    EXPECT_EQ(rendered.value(), f.hubwatch_output) << f.divergence;
    return;
  }
  if (f.expected.contains("error")) {
    EXPECT_FALSE(rendered.ok()) << "the reference failed with: " << f.expected["error"]
                                << "\nbut hubwatch rendered: " << rendered.value();
    return;
  }
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  EXPECT_EQ(rendered.value(), f.expected["output"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Features, FeatureConformance, ::testing::ValuesIn(LoadFeatures()),
                         [](const auto& info) { return CaseName(info.param.name, ""); });

}  // namespace
}  // namespace hubwatch::chat_template

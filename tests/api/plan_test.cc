// Contract tests: POST /api/v1/plan (a config.json or a checkpoint's header in, the estimate
// JSON out).

#include <fstream>
#include <set>
#include <sstream>

#include "daemon/page/href.h"
#include "estimator/hardware.h"
#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

std::string ReadFixture(const std::string& path) {
  std::ifstream in(std::string(HUBWATCH_FIXTURES_DIR) + "/" + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ReadModel(const std::string& name) { return ReadFixture("models/" + name); }

TEST_F(ApiTest, PlanEstimatesAConfig) {
  StartServer();
  const std::string config = ReadModel("meta-llama__Meta-Llama-3-8B.config.json");
  ASSERT_FALSE(config.empty());
  HttpResponse r = Post("/api/v1/plan?seq=4096&batch=2&lora_rank=64&cards=a100-80gb,h100", config);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["schema"], "hubwatch.estimate/1");
  EXPECT_EQ(j["params"]["total"], 8030261248u);  // Meta-Llama-3-8B, published
  EXPECT_EQ(j["workload"]["seq"], 4096);
  EXPECT_EQ(j["workload"]["batch"], 2);
  std::set<std::string> cards;
  for (const auto& f : j["fit"]) cards.insert(f["card"]);
  EXPECT_EQ(cards, (std::set<std::string>{"a100-80gb", "h100-80gb"}));

  // The same config with another rank: the LoRA adapters grow.
  const nlohmann::json r16 = Post("/api/v1/plan?lora_rank=16", config).json();
  EXPECT_GT(j["params"]["lora_adapter"].get<uint64_t>(),
            r16["params"]["lora_adapter"].get<uint64_t>());
}

// A checkpoint's header instead of (or beside) its config.json: the body's three other forms.
TEST_F(ApiTest, PlanEstimatesFromASafetensorsHeader) {
  StartServer();
  const std::string header = ReadFixture("safetensors/gpt2.header.json");
  const std::string config = ReadModel("openai-community__gpt2.config.json");
  ASSERT_FALSE(header.empty());
  ASSERT_FALSE(config.empty());

  // The header alone: the model is its tensors, counted exactly (gpt2: 124,439,808 published).
  HttpResponse alone = Post("/api/v1/plan", header);
  ASSERT_EQ(alone.status, 200) << alone.body.substr(0, 500);
  EXPECT_EQ(alone.json()["model"]["source"], "checkpoint_tensors");
  EXPECT_EQ(alone.json()["params"]["total"], 124439808u);

  // The start of the .safetensors file, as `head -c` gives it: 8-byte length, then the header.
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  HttpResponse file_start = Post("/api/v1/plan", prefix + header);
  ASSERT_EQ(file_start.status, 200) << file_start.body.substr(0, 500);
  EXPECT_EQ(file_start.json()["params"]["total"], 124439808u);

  // Both: the modelled structure, compared with the checkpoint tensor by tensor.
  const std::string both = R"({"config": )" + config + R"(, "safetensors_headers": [)" + header + "]}";
  HttpResponse compared = Post("/api/v1/plan", both);
  ASSERT_EQ(compared.status, 200) << compared.body.substr(0, 500);
  const nlohmann::json j = compared.json();
  EXPECT_EQ(j["model"]["source"], "modelled");
  EXPECT_EQ(j["params"]["total"], 124439808u);
  ASSERT_TRUE(j.contains("checkpoint"));
  EXPECT_EQ(j["checkpoint"]["missing"].size(), 0u);
  EXPECT_EQ(j["checkpoint"]["parameter_delta"], 0);

  // An index names shards, not shapes: refused with what to send instead.
  HttpResponse index = Post("/api/v1/plan", ReadModel("openai__gpt-oss-20b.index.json"));
  EXPECT_EQ(index.status, 422);
  EXPECT_NE(index.body.find("post the shards' safetensors headers instead"), std::string::npos)
      << index.body;
  for (const char* bad : {R"({"config": [], "safetensors_headers": []})",
                          R"({"safetensors_headers": {"a": 1}})",
                          R"({"safetensors_headers": [7]})",
                          R"({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 3]}})"}) {
    HttpResponse r = Post("/api/v1/plan", bad);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
}

// The card ids the cards= parameter takes, each with what the fit and cost tables assume.
TEST_F(ApiTest, CardsListsWhatCardsTakes) {
  StartServer();
  HttpResponse r = Get("/api/v1/cards");
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json j = r.json();
  ASSERT_EQ(j["cards"].size(), KnownCards().size());
  std::string ids;
  for (const auto& card : j["cards"]) {
    ids += (ids.empty() ? "" : ",") + card["id"].get<std::string>();
    EXPECT_GT(card["memory_gb"].get<double>(), 0);
  }
  EXPECT_EQ(j["max_cards"], kMaxCards);
  // Every id listed is one the plan takes.
  HttpResponse plan = Post("/api/v1/plan?cards=" + ids,
                           ReadModel("meta-llama__Meta-Llama-3-8B.config.json"));
  ASSERT_EQ(plan.status, 200) << plan.body.substr(0, 300);
  EXPECT_EQ(plan.json()["fit"].size(), KnownCards().size());
}

TEST_F(ApiTest, PlanErrors) {
  StartServer();
  const std::string config = ReadModel("meta-llama__Meta-Llama-3-8B.config.json");
  for (const char* query : {"?seq=0", "?batch=x", "?lora_rank=999999999", "?cards=warp-drive",
                            "?preset=nope", "?seq=%zz"}) {
    const HttpResponse r = Post(std::string("/api/v1/plan") + query, config);
    EXPECT_EQ(r.status, 400) << query << " " << r.body;
    EXPECT_TRUE(r.json().contains("error"));
  }
  EXPECT_EQ(Post("/api/v1/plan", "").status, 400);
  EXPECT_EQ(Post("/api/v1/plan", "{not json").status, 400);
  EXPECT_EQ(Post("/api/v1/plan", R"({"model_type": "llama", "hidden_size": -3})").status, 400);
  const HttpResponse unsupported =
      Post("/api/v1/plan", R"({"model_type": "quantum-foam", "architectures": ["FoamForCausalLM"],
                               "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100})");
  EXPECT_EQ(unsupported.status, 422) << unsupported.body;
  EXPECT_EQ(Get("/api/v1/plan").status, 405);
}

// The card list is capped before any planning: 17 different cards, or 65 entries, answer 400
// naming the cap; the same card named many ways is planned once.
TEST_F(ApiTest, PlanCardListsAreCappedAndDeduplicated) {
  StartServer();
  const std::string config = ReadModel("meta-llama__Meta-Llama-3-8B.config.json");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += "c" + std::to_string(i) + "%3D80:300:1,";
  HttpResponse r = Post("/api/v1/plan?cards=" + seventeen, config);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("at most 16 different cards"), std::string::npos) << r.body;
  std::string repeated;
  for (int i = 0; i < 65; ++i) repeated += "h100,";
  r = Post("/api/v1/plan?cards=" + repeated, config);
  EXPECT_EQ(r.status, 400) << r.body;
  r = Post("/api/v1/plan?cards=h100,H100-80GB,h100-80", config);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  const HttpResponse one = Post("/api/v1/plan?cards=h100", config);
  EXPECT_EQ(r.body, one.body) << "three names of one card plan it once";
  // More query parameters than any route takes are refused before they are decoded.
  std::string params;
  for (int i = 0; i < 65; ++i) params += "&x" + std::to_string(i) + "=1";
  EXPECT_EQ(Post("/api/v1/plan?seq=1" + params, config).status, 400);
}

// 1.4 million eos ids (10 MB of config) used to answer ~300 MB, one lint per id: the reply must
// not grow with the list. Bound: the same config's reply with one eos id, plus 4 KiB.
TEST_F(ApiTest, PlanOfAHugeTokenIdListIsBounded) {
  config_.max_plan_body_bytes = 16 << 20;
  StartServer();
  nlohmann::json config =
      nlohmann::json::parse(ReadModel("meta-llama__Meta-Llama-3-8B.config.json"));
  config["eos_token_id"] = 128001;
  const HttpResponse small = Post("/api/v1/plan", config.dump());
  ASSERT_EQ(small.status, 200) << small.body.substr(0, 500);
  std::vector<int64_t> ids(1'400'000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 200'000 + static_cast<int64_t>(i);
  config["eos_token_id"] = ids;
  const std::string body = config.dump();
  ASSERT_GT(body.size(), 9u << 20);
  const HttpResponse r = Post("/api/v1/plan", body);
  EXPECT_EQ(r.status, 200) << r.body.substr(0, 500);
  EXPECT_LT(r.body.size(), small.body.size() + 4096) << r.body.substr(0, 500);
  EXPECT_EQ(Get("/healthz").status, 200);
}

// The /plan form answers a page of about the empty form's size plus the config, whatever the
// post: a million empty, nameless or repeated fields, or a config of the one character HTML
// writes longest (1 MiB of `&` came back as 5.2 MB of `&amp;`). The answer still says what was
// wrong, and a config too long to show back escaped is said not to be shown again.
TEST_F(ApiTest, PlanFormFloodsAnswerAPageOfAboutTheFormsSize) {
  StartServer();
  const Headers form_type = {{"Content-Type", "application/x-www-form-urlencoded"}};
  const HttpResponse empty = Get("/plan");
  ASSERT_EQ(empty.status, 200);
  auto repeat = [](const std::string& prefix, const std::string& unit, size_t bytes) {
    std::string out = prefix;
    out.reserve(prefix.size() + bytes);
    while (out.size() + unit.size() <= prefix.size() + bytes) out += unit;
    return out;
  };
  constexpr size_t kMiB = 1u << 20;
  for (const auto& [body, shown_again] :
       std::vector<std::pair<std::string, bool>>{{repeat("", "&", kMiB), true},
                                                 {repeat("", "a&", kMiB), true},
                                                 {repeat("", "x=1&", kMiB), true},
                                                 {repeat("", "config=&", kMiB), true},
                                                 {repeat("config=", "%26", 3 * kMiB), false},
                                                 {repeat("config=", "%22", 3 * kMiB), false},
                                                 {repeat("config=", "%3C", 3 * kMiB), false},
                                                 {repeat("config=", "%E2%80%AE", 3 * kMiB), false},
                                                 {repeat("config=", "%FF", 3 * kMiB), false}}) {
    const std::string shape = body.substr(0, 20);
    const HttpResponse r = Post("/plan", body, form_type);
    EXPECT_EQ(r.status, 400) << shape << " " << r.body.substr(0, 300);
    EXPECT_LT(r.body.size(), empty.body.size() + (64u << 10)) << shape;
    EXPECT_NE(r.body.find("class=\"error\""), std::string::npos) << shape;
    EXPECT_EQ(r.body.find("is not shown again") == std::string::npos, shown_again) << shape;
  }
  // A config the estimator takes, padded with 512 KiB of `&` in a member: the estimate, and an
  // empty form below it to paste another model.
  const std::string config = ReadModel("meta-llama__Meta-Llama-3-8B.config.json");
  const HttpResponse plain = Post("/plan", "config=" + page::QueryEscape(config), form_type);
  ASSERT_EQ(plain.status, 200) << plain.body.substr(0, 300);
  EXPECT_NE(plain.body.find("&quot;LlamaForCausalLM&quot;"), std::string::npos) << "shown again";
  nlohmann::json padded = nlohmann::json::parse(config);
  padded["padding"] = std::string(512u << 10, '&');
  const HttpResponse r = Post("/plan", "config=" + page::QueryEscape(padded.dump()), form_type);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  EXPECT_LT(r.body.size(), plain.body.size() + (64u << 10));
  EXPECT_NE(r.body.find("Paste another model"), std::string::npos);
  EXPECT_EQ(Get("/healthz").status, 200);
}

}  // namespace
}  // namespace hubwatch::api::testing

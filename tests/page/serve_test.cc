// The pages over HTTP, from a real ApiServer over the page fixture store: headers, ETag and
// 304, gzip, the twin, the index and index.json, /changes, and the /plan form posted.

#include <gtest/gtest.h>

#include <cstdlib>

#include "daemon/page/href.h"
#include "tests/api/api_env.h"
#include "tests/page/page_env.h"
#include "tests/page/page_fixture.h"

namespace hubwatch::page::testing {
namespace {

using api::testing::Headers;
using api::testing::HttpResponse;

class PageServeTest : public api::testing::ApiTest {
 protected:
  static void SetUpTestSuite() { ::setenv("HUBWATCH_API_FIXTURE_DB", PageDb().c_str(), 1); }
  void SetUp() override {
    ApiTest::SetUp();
    StartServer();
  }
  static void ExpectPageHeaders(const HttpResponse& r) {
    EXPECT_EQ(r.header("content-security-policy"),
              "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
              "frame-ancestors 'none'");
    EXPECT_EQ(r.header("x-content-type-options"), "nosniff");
    EXPECT_FALSE(r.header("referrer-policy").empty());
  }
};

TEST_F(PageServeTest, ModelPageTwinAndConditionalGet) {
  const std::string path = std::string("/models/") + kGemma;
  HttpResponse page = Get(path);
  ASSERT_EQ(page.status, 200) << page.body.substr(0, 300);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  ExpectPageHeaders(page);
  EXPECT_NE(page.body.find("9,241,705,984"), std::string::npos);
  const std::string etag = page.header("etag");
  ASSERT_TRUE(etag.starts_with("W/\"")) << etag;
  HttpResponse again = Get(path, {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  HttpResponse gz = Get(path, {{"Accept-Encoding", "gzip"}});
  EXPECT_EQ(gz.status, 200);
  EXPECT_EQ(gz.header("content-encoding"), "gzip");
  EXPECT_LT(gz.body.size(), page.body.size() / 4);

  HttpResponse md = Get(path + ".md");
  ASSERT_EQ(md.status, 200);
  EXPECT_EQ(md.header("content-type"), "text/markdown; charset=utf-8");
  EXPECT_NE(md.body.find("## What changed upstream"), std::string::npos);
  EXPECT_NE(md.header("etag"), etag);

  EXPECT_EQ(Get("/models/google/not-tracked").status, 404);
  EXPECT_EQ(Get(path + "?revision=zzz").status, 400);
  EXPECT_EQ(Get(path + "?revision=0000000").status, 404);
  EXPECT_EQ(Get("/page.css").header("content-type"), "text/css; charset=utf-8");
}

// The rendered page is kept under its ETag; a new revision moves the tag, so the next request
// renders the new history instead of serving the kept page.
TEST_F(PageServeTest, AKeptPageIsServedUntilTheHistoryMoves) {
  const std::string path = std::string("/models/") + kGemma;
  const std::string title = "Update generation settings (#1)";
  HttpResponse first = Get(path);
  ASSERT_EQ(first.status, 200);
  HttpResponse kept = Get(path);
  EXPECT_EQ(kept.header("etag"), first.header("etag"));
  EXPECT_EQ(kept.body, first.body);
  EXPECT_EQ(first.body.find(title), std::string::npos);
  auto revisions = store_->revisions().ListRevisions(kGemma, 1);
  ASSERT_TRUE(revisions.ok() && !revisions->empty());
  const std::string head = revisions->front().sha;

  ASSERT_TRUE(AddSyntheticHistory(db_path_, kGemma, 1).ok());
  HttpResponse moved = Get(path, {{"If-None-Match", first.header("etag")}});
  ASSERT_EQ(moved.status, 200);
  EXPECT_NE(moved.header("etag"), first.header("etag"));
  EXPECT_NE(moved.body.find(title), std::string::npos);
  // The page of the revision shown before shows the new timeline too.
  HttpResponse older = Get(path + "?revision=" + head);
  ASSERT_EQ(older.status, 200);
  EXPECT_NE(older.header("etag"), first.header("etag"));
  EXPECT_NE(older.body.find(title), std::string::npos);
}

TEST_F(PageServeTest, IndexIndexJsonAndChanges) {
  // The landing page: the families with their counts and the largest family's models.
  HttpResponse landing = Get("/");
  ASSERT_EQ(landing.status, 200);
  ExpectPageHeaders(landing);
  EXPECT_NE(landing.body.find("<a href=\"/?family=gemma2\">gemma2</a>"), std::string::npos);
  EXPECT_NE(landing.body.find("<form method=\"get\" action=\"/\" class=\"filters\">"),
            std::string::npos);
  HttpResponse index = Get("/?family=gemma2");
  ASSERT_EQ(index.status, 200);
  EXPECT_NE(index.body.find("href=\"/models/google/gemma-2-9b-it\""), std::string::npos);
  EXPECT_NE(index.body.find(">gemma2</h2>"), std::string::npos);
  HttpResponse json = Get("/index.json");
  ASSERT_EQ(json.status, 200);
  const nlohmann::json j = json.json();
  ASSERT_TRUE(j["models"].is_array());
  // The calibration page's summary in numbers.
  EXPECT_EQ(j["calibration"]["url"], "/calibration");
  EXPECT_GE(j["calibration"]["runs_estimated"].get<int>(), 100);
  EXPECT_LE(j["calibration"]["median_abs_error_pct"].get<double>(), 10);
  bool gemma = false, weights_only = false;
  for (const auto& m : j["models"]) {
    if (m["repo"] == kGemma) {
      gemma = true;
      EXPECT_EQ(m["params"], 9241705984u);
      EXPECT_NEAR(m["serve_gb"].get<double>(), 18.48, 0.01);
      EXPECT_EQ(m["estimate_source"], "modelled");
    }
    if (m["repo"] == kWeightsOnly) {  // no config.json: counted from its tensors, and says so
      weights_only = true;
      EXPECT_EQ(m["params"], 124439808u);
      EXPECT_EQ(m["estimate_source"], "checkpoint_tensors");
      EXPECT_EQ(m["family"], "no model_type");
    }
  }
  EXPECT_TRUE(gemma);
  EXPECT_TRUE(weights_only);
  HttpResponse tensors = Get("/?family=no+model_type");
  EXPECT_NE(tensors.body.find("124,439,808 *"), std::string::npos);
  EXPECT_NE(tensors.body.find("* from the checkpoint&#39;s tensors: structure not modelled"),
            std::string::npos);

  HttpResponse changes = Get("/changes?impact=breaking");
  ASSERT_EQ(changes.status, 200);
  EXPECT_EQ(changes.body.find("chip behavioral"), std::string::npos);
  HttpResponse mistral = Get("/changes?kind=chat_template&repo=" + QueryEscape(kMistral));
  EXPECT_NE(mistral.body.find("chat template"), std::string::npos);
  EXPECT_EQ(Get("/changes?impact=huge").status, 400);
  EXPECT_EQ(Get("/changes?kind=nope").status, 400);

  // The filters are a form that works without JavaScript (GET, the chosen values kept), since
  // means what it means everywhere (a revision or a commit time), and rows show commit dates.
  EXPECT_NE(mistral.body.find("<form method=\"get\" action=\"/changes\" class=\"filters\">"),
            std::string::npos);
  EXPECT_NE(mistral.body.find("<option selected>chat_template</option>"), std::string::npos);
  auto revisions = store_->revisions().ListRevisions(kMistral);
  ASSERT_TRUE(revisions.ok() && revisions->size() >= 3);
  const store::RevisionRecord& pin = (*revisions)[2];  // two revisions came after it
  auto after_pin = store_->queries().ChangesAfter(kMistral, pin.sha, "");
  ASSERT_TRUE(after_pin.ok() && !after_pin->empty());
  HttpResponse since =
      Get("/changes?repo=" + QueryEscape(kMistral) + "&since=" + pin.sha.substr(0, 8));
  ASSERT_EQ(since.status, 200);
  size_t rows = 0;
  for (size_t at = since.body.find("<tr><td>"); at != std::string::npos;
       at = since.body.find("<tr><td>", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, after_pin->size());
  EXPECT_NE(since.body.find("<td>" + (*revisions)[0].authored_at.substr(0, 10) + "</td>"),
            std::string::npos);
  EXPECT_NE(since.body.find("value=\"" + pin.sha.substr(0, 8) + "\""), std::string::npos);
  EXPECT_EQ(Get("/changes?since=someday").status, 400);
}

TEST_F(PageServeTest, PlanFormEstimatesOrKeepsTheTextWithTheReason) {
  HttpResponse form = Get("/plan");
  ASSERT_EQ(form.status, 200);
  EXPECT_NE(form.body.find("<textarea"), std::string::npos);
  const std::string config =
      R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"})";
  const Headers form_type = {{"Content-Type", "application/x-www-form-urlencoded"}};
  HttpResponse ok =
      Post("/plan", "config=" + QueryEscape(config) + "&seq=&batch=2&lora_rank=8", form_type);
  ASSERT_EQ(ok.status, 200) << ok.body.substr(0, 500);
  EXPECT_NE(ok.body.find("8,030,261,248"), std::string::npos);
  EXPECT_NE(ok.body.find("LoRA r=8"), std::string::npos);
  EXPECT_EQ(ok.body.find("What changed upstream"), std::string::npos);
  HttpResponse bad =
      Post("/plan", "config=" + QueryEscape("{\"model_type\": \"<b>nope</b>\"}"), form_type);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("class=\"error\""), std::string::npos);
  EXPECT_NE(bad.body.find("{&quot;model_type&quot;: &quot;&lt;b&gt;nope&lt;/b&gt;&quot;}"),
            std::string::npos);
  EXPECT_EQ(Post("/plan", "config=x&lora_rank=0", form_type).status, 400);

  // The settings runs differ in, by their assumption names: the page says what it counted.
  HttpResponse set = Post("/plan",
                          "config=" + QueryEscape(config) +
                              "&train.optimizer=adamw_8bit&train.checkpointing=full"
                              "&runtime.metric=allocated",
                          form_type);
  ASSERT_EQ(set.status, 200) << set.body.substr(0, 500);
  EXPECT_NE(set.body.find("value=\"adamw_8bit\""), std::string::npos);
  EXPECT_NE(set.body.find("and gradient checkpointing"), std::string::npos);
  HttpResponse unknown =
      Post("/plan", "config=" + QueryEscape(config) + "&train.optimizer=lion", form_type);
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.body.find("not one of adamw, adamw_8bit"), std::string::npos);
}

TEST_F(PageServeTest, CalibrationIsServedWithItsMarkdownTwin) {
  HttpResponse html = Get("/calibration");
  ASSERT_EQ(html.status, 200);
  EXPECT_NE(html.body.find("<h1>Memory estimates against measured runs</h1>"), std::string::npos);
  EXPECT_NE(html.body.find("href=\"/calibration.md\""), std::string::npos);
  HttpResponse md = Get("/calibration.md");
  ASSERT_EQ(md.status, 200);
  EXPECT_NE(md.body.find("# Memory estimates against measured runs"), std::string::npos);
}

// The form echoes what was posted: every field but the config is held to 1 KiB before any work,
// so the page stays small whatever the post (issue 28: 30,000 cards built a 131 MB reply).
TEST_F(PageServeTest, PlanFormFieldsAreBoundedBeforeAnyWork) {
  const Headers form_type = {{"Content-Type", "application/x-www-form-urlencoded"}};
  std::string cards;
  while (cards.size() < (1u << 20)) cards += "a100-80gb,h100,";
  HttpResponse r = Post("/plan", "config=%7B%7D&cards=" + cards, form_type);
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find("the cards field is longer than 1024 bytes"), std::string::npos);
  EXPECT_LT(r.body.size(), 64u << 10) << "the echo is cut, not the whole list";
  // Within the field limit, a long list is refused at its cap (64 entries).
  cards.resize(1000);
  cards.resize(cards.rfind(','));
  r = Post("/plan", "config=%7B%7D&cards=" + cards, form_type);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("at most 64 entries"), std::string::npos);
  // 100,000 empty fields are refused before they are decoded.
  std::string fields = "config=%7B%7D";
  for (int i = 0; i < 100'000; ++i) fields += "&a";
  r = Post("/plan", fields, form_type);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("more than 64 parameters"), std::string::npos);
}

}  // namespace
}  // namespace hubwatch::page::testing

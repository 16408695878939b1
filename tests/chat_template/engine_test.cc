// Engine behaviour the conformance corpus does not pin down: error reporting (construct, line,
// column, code), the limits that keep untrusted templates bounded, variables, and thread
// safety.

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tracker/chat_template/template.h"

namespace hubwatch::chat_template {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

Result<std::string> Render(const std::string& source, const Json& variables = Json::object(),
                           const RenderOptions& options = {}) {
  Result<Template> parsed = Template::Parse(source, options.limits);
  if (!parsed.ok()) return parsed.error();
  return parsed->Render(VariablesFromJson(variables), options);
}

TEST(TemplateErrors, SyntaxErrorNamesLineAndColumn) {
  const Result<std::string> r = Render("line one\n{{ 'ok' }}\n  {{ 1 @ 2 }}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_THAT(r.error().message, HasSubstr("line 3, column 8"));
  EXPECT_THAT(r.error().message, HasSubstr("Unexpected character: @"));
}

TEST(TemplateErrors, UnclosedBlockNamesTheOpeningStatement) {
  const Result<std::string> r = Render("a\n{% for m in messages %}\n{{ m }}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("missing {% endfor %} for the for loop at line 2"));
}

TEST(TemplateErrors, UnsupportedStatementIsUnsupported) {
  const Result<std::string> r = Render("x\n{% include 'header.jinja' %}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(r.error().message, HasSubstr("line 2, column 4: unsupported statement 'include'"));
}

TEST(TemplateErrors, RuntimeErrorNamesTheFilterAndItsPosition) {
  const Result<std::string> r =
      Render("{% for m in messages %}\n{{ m.content | trim }}{% endfor %}",
             Json{{"messages", {{{"content", nullptr}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "line 2, column 16: filter 'trim': cannot apply to NullValue");
}

TEST(TemplateErrors, UnknownFilterIsUnsupported) {
  const Result<std::string> r = Render("{{ 'x' | wordcount }}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(r.error().message, HasSubstr("filter 'wordcount'"));
}

TEST(TemplateErrors, RaiseExceptionCarriesTheTemplateMessage) {
  const Result<std::string> r = Render(
      "{% if messages[0].role != 'user' %}{{ raise_exception('Roles must alternate') }}{% endif %}",
      Json{{"messages", {{{"role", "assistant"}}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("column 39: raise_exception: Roles must alternate"));
}

TEST(TemplateErrors, PositionsSurviveWhitespaceControlAndTrimming) {
  // lstrip_blocks, trim_blocks and {%- remove text before the error; positions still refer to
  // the original source.
  const Result<std::string> r =
      Render("{% if true %}\n    {%- set x = 1 %}\n\t{{ x.y.z() }}{% endif %}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("line 3, column 9: call to method 'z'"));
}

TEST(TemplateErrors, VariablesMayNotRedefineGlobals) {
  const Result<std::string> r = Render("{{ range }}", Json{{"range", 3}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("'range' is already declared"));
}

TEST(TemplateErrors, BreakOutsideALoopIsAnError) { EXPECT_FALSE(Render("a{% break %}b").ok()); }

TEST(TemplateLimits, MacroRecursionIsBounded) {
  RenderOptions options;
  options.limits.max_call_depth = 20;
  const Result<std::string> r =
      Render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", Json::object(), options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
  EXPECT_THAT(r.error().message, HasSubstr("deeper than 20"));
}

TEST(TemplateLimits, DefaultRecursionLimitStopsInfiniteRecursion) {
  const Result<std::string> r = Render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, LoopIterationsAreBounded) {
  RenderOptions options;
  options.limits.max_loop_iterations = 1000;
  EXPECT_TRUE(Render("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}",
                     Json::object(), options)
                  .ok());
  const Result<std::string> r =
      Render("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
             Json::object(), options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, HugeRangeIsRefusedBeforeAllocating) {
  const Result<std::string> r = Render("{{ range(1000000000000) | length }}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, OutputSizeIsBounded) {
  RenderOptions options;
  options.limits.max_output_bytes = 1000;
  EXPECT_TRUE(
      Render("{% for i in range(10) %}0123456789{% endfor %}", Json::object(), options).ok());
  const Result<std::string> r =
      Render("{% for i in range(200) %}0123456789{% endfor %}", Json::object(), options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, ExponentialStringGrowthIsBounded) {
  const Result<std::string> r = Render(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% "
      "endfor %}"
      "{{ ns.s | length }}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, EvaluationStepsAreBounded) {
  RenderOptions options;
  options.limits.max_steps = 10'000;
  // Branching recursion without loops: 2^20 calls.
  const Result<std::string> r = Render(
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(20) "
      "}}",
      Json::object(), options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOverflow);
}

TEST(TemplateLimits, DeepNestingIsRejectedAtParseTime) {
  const std::string source = "{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}";
  const Result<Template> parsed = Template::Parse(source);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kOverflow);
  const std::string ok = "{{ " + std::string(20, '(') + "1" + std::string(20, ')') + " }}";
  EXPECT_TRUE(Template::Parse(ok).ok());
}

TEST(TemplateLimits, DeepUnaryChainsAreRejectedAtParseTime) {
  EXPECT_FALSE(Template::Parse("{{ " + std::string(5000, '-') + "1 }}").ok());
  std::string nots;
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_FALSE(Template::Parse("{{ " + nots + "x }}").ok());
}

TEST(TemplateVariables, ObjectKeysKeepJsonOrderWithIndexKeysFirst) {
  const Json variables = Json::parse(R"({"d": {"b": 1, "a": 2, "10": 3, "2": 4}})");
  const Result<std::string> r = Render("{{ d | tojson }}", variables);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), R"({"2": 4, "10": 3, "b": 1, "a": 2})");
}

TEST(TemplateVariables, IntegralJsonFloatsAreIntegers) {
  const Result<std::string> r =
      Render("{{ x }}|{{ x is integer }}|{{ y }}", Json::parse(R"({"x": 2.0, "y": 2.5})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "2|true|2.5");
}

TEST(TemplateVariables, OverlayKeepsDefaultsAndLetsOverridesWin) {
  const Variables merged =
      OverlayVariables(VariablesFromJson(Json{{"bos_token", "<s>"}, {"eos_token", "</s>"}}),
                       VariablesFromJson(Json{{"eos_token", "<|end|>"}, {"x", 1}}));
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].first, "bos_token");
  EXPECT_EQ(merged[1].second.str(), "<|end|>");
  EXPECT_EQ(merged[2].first, "x");
}

TEST(TemplateClock, StrftimeNowFormatsTheInjectedTime) {
  RenderOptions options;
  options.now = CivilTime{2024, 9, 5, 7, 3, 0};
  const Result<std::string> r =
      Render("{{ strftime_now('%d %b %Y, %B %H:%M %%') }}", Json::object(), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "05 Sep 2024, September 07:03 %");
}

TEST(TemplateControlFlow, BreakAndContinueDropTheIterationOutput) {
  // The reference renders an iteration on its own and discards it on break / continue.
  const Result<std::string> r = Render(
      "{% for x in [1, 2, 3, 4] %}<{{ x }}{% if x == 2 %}{% continue %}{% endif %}"
      "{% if x == 4 %}{% break %}{% endif %}>{% endfor %}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "<1><3>");
}

TEST(TemplateControlFlow, ElseRunsWhenEveryIterationContinues) {
  const Result<std::string> r =
      Render("{% for x in [1, 2] %}{% continue %}{% else %}none{% endfor %}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "none");
}

TEST(TemplateDivergence, CountAndEscapeFilters) {
  const Result<std::string> r =
      Render("{{ [1, 2, 3] | count }}|{{ '<a href=\"x\">&</a>' | escape }}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), "3|&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt;");
}

TEST(TemplateMemory, CyclesThroughNamespacesAndMacrosRenderAndAreFreed) {
  // A namespace holding itself and a macro holding its own scope: the render frees both (the
  // sanitizer build checks for leaks).
  const Result<std::string> r = Render(
      "{% macro f(n) %}{{ n }}{% endmacro %}{% set ns = namespace() %}{% set ns.self = ns %}"
      "{% set ns.f = f %}{% for i in [1, 2] %}{% macro g() %}{{ ns.self.f(i) }}{% endmacro %}"
      "{% set ns.g = g %}{% endfor %}{{ ns.f(1) }}{{ ns.g() }}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), "12");
}

TEST(TemplateThreads, OneTemplateRendersConcurrently) {
  Result<Template> parsed = Template::Parse(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "{{ m.role }}:{{ m.content }};{% endfor %}{{ ns.n }}");
  ASSERT_TRUE(parsed.ok());
  const Variables variables = VariablesFromJson(
      Json{{"messages",
            {{{"role", "user"}, {"content", "hi"}}, {{"role", "assistant"}, {"content", "yo"}}}}});
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(8);
  for (size_t t = 0; t < outputs.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Result<std::string> r = parsed->Render(variables);
        if (r.ok()) outputs[t] = r.value();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& output : outputs) EXPECT_EQ(output, "user:hi;assistant:yo;2");
}

}  // namespace
}  // namespace hubwatch::chat_template

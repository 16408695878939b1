// hubwatch chat-template render, run in-process.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hubwatch::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ChatTemplateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hubwatch_cli_ct_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
  int Run(const Args& args) {
    out_.str("");
    err_.str("");
    return RunChatTemplate(args, out_, err_);
  }

  fs::path dir_;
  std::ostringstream out_;
  std::ostringstream err_;
};

const char* kChatMl =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' "
    "}}{% endif %}\n";

TEST_F(ChatTemplateCli, PrintsExactlyThePrompt) {
  const std::string tmpl = Write("chatml.jinja", kChatMl);
  const std::string conversation =
      Write("c.json", R"({"messages": [{"role": "user", "content": "Hi"}]})");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", conversation}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(err_.str(), "");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", conversation,
                 "--add-generation-prompt"}),
            0);
  EXPECT_EQ(out_.str(), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_F(ChatTemplateCli, TokenizerConfigSuppliesSpecialTokensTheConversationMayOverride) {
  const std::string config = Write("tokenizer_config.json",
                                   R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>",
                                       "chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"})");
  const std::string plain =
      Write("plain.json", R"({"messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(Run({"render", "--template", config, "--conversation", plain}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "<s>x</s>");
  const std::string overriding =
      Write("override.json",
            R"({"eos_token": "<|end|>", "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(Run({"render", "--template", config, "--conversation", overriding}), 0);
  EXPECT_EQ(out_.str(), "<s>x<|end|>");
}

TEST_F(ChatTemplateCli, TemplateErrorIsOneLineOnStderrWithExitTwo) {
  const std::string tmpl =
      Write("bad.jinja", "{% if messages %}\n{{ raise_exception('no system role') }}{% endif %}");
  const std::string conversation =
      Write("c.json", R"({"messages": [{"role": "system", "content": "s"}]})");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", conversation}), 2);
  EXPECT_EQ(out_.str(), "");
  EXPECT_THAT(err_.str(),
              HasSubstr("bad.jinja: line 2, column 4: raise_exception: no system role\n"));
  const std::string message = err_.str();
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1);
}

TEST_F(ChatTemplateCli, BadInputsExitTwo) {
  const std::string tmpl = Write("t.jinja", "x");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", (dir_ / "missing.json").string()}),
            2);
  EXPECT_THAT(err_.str(), HasSubstr("missing.json: cannot open"));
  const std::string not_json = Write("c.json", "{nope");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", not_json}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("not valid JSON"));
  const std::string array = Write("a.json", "[1]");
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", array}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("must be a JSON object"));
  EXPECT_EQ(Run({"render", "--template", tmpl}), 2);
  EXPECT_EQ(Run({"frobnicate"}), 2);
  EXPECT_EQ(Run({}), 2);
  EXPECT_EQ(Run({"render", "--template", tmpl, "--conversation", array, "--extra"}), 2);
}

TEST_F(ChatTemplateCli, HelpGoesToStdout) {
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("usage: hubwatch chat-template render --template FILE"));
  EXPECT_EQ(Run({"render", "--help"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("--add-generation-prompt"));
}

}  // namespace
}  // namespace hubwatch::cli

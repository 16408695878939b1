// GGUF metadata from a file prefix: the keys a derivative check compares, a prefix too short
// says how much more it needs, and damaged or hostile headers are errors that say where.

#include "estimator/formats/gguf_header.h"

#include <gtest/gtest.h>

#include "tests/estimator/gguf_writer.h"

namespace hubwatch {
namespace {

using testing::GgufWriter;

constexpr char kTemplate[] =
    "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>{% endfor %}";

// A Llama-3-like quant: the converter's order (architecture, hyperparameters, the tokenizer's
// arrays, the special ids, the flags, then the chat template).
std::string Llama3Quant(uint32_t eos = 128001, int vocab = 128256) {
  std::vector<std::string> tokens;
  for (int i = 0; i < vocab; ++i) tokens.push_back("t" + std::to_string(i));
  if (vocab > 128009) {
    tokens[128000] = "<|begin_of_text|>";
    tokens[128001] = "<|end_of_text|>";
    tokens[128009] = "<|eot_id|>";
  }
  return GgufWriter()
      .String("general.architecture", "llama")
      .String("general.type", "model")
      .String("general.name", "Meta Llama 3 8B Instruct")
      .U32("llama.context_length", 8192)
      .String("tokenizer.ggml.model", "gpt2")
      .String("tokenizer.ggml.pre", "llama-bpe")
      .Strings("tokenizer.ggml.tokens", tokens)
      .I32s("tokenizer.ggml.token_type", std::vector<int32_t>(vocab, 1))
      .U32("tokenizer.ggml.bos_token_id", 128000)
      .U32("tokenizer.ggml.eos_token_id", eos)
      .Bool("tokenizer.ggml.add_bos_token", true)
      .String("tokenizer.chat_template.tool_use", "{{ tools }}")
      .String("tokenizer.chat_template", kTemplate)
      .U32("general.quantization_version", 2)
      .Build();
}

TEST(GgufHeader, ReadsWhatADerivativeCheckCompares) {
  const std::string file = Llama3Quant() + std::string(4096, '\0');  // tensor data follows
  Result<GgufScan> scan = ScanGgufMetadata(file);
  ASSERT_TRUE(scan.ok()) << scan.error().message;
  ASSERT_TRUE(scan->complete);
  const GgufMetadata& m = scan->metadata;
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.kv_count, 14u);
  EXPECT_EQ(m.metadata_bytes, file.size() - 4096);
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.type, "model");
  EXPECT_EQ(m.tokenizer_pre, "llama-bpe");
  EXPECT_EQ(m.token_count, 128256u);
  EXPECT_EQ(m.chat_template, kTemplate);
  EXPECT_EQ(m.named_chat_templates.at("tool_use"), "{{ tools }}");
  EXPECT_EQ(m.special_token_ids.at("bos"), 128000);
  EXPECT_EQ(m.special_token_ids.at("eos"), 128001);
  EXPECT_EQ(m.special_token_text.at("bos"), "<|begin_of_text|>");
  EXPECT_EQ(m.special_token_text.at("eos"), "<|end_of_text|>");
  EXPECT_EQ(m.add_bos_token, true);
  EXPECT_FALSE(m.add_eos_token.has_value());

  const GgufMetadata fixed = ScanGgufMetadata(Llama3Quant(128009))->metadata;
  EXPECT_EQ(fixed.special_token_text.at("eos"), "<|eot_id|>");
}

// A prefix that ends anywhere inside the metadata asks for more, never further than the file
// holds, and growing it to what it asks for gets strictly further until the scan completes.
TEST(GgufHeader, AShortPrefixSaysHowMuchMoreItNeeds) {
  const std::string file = Llama3Quant(128001, 300);  // a rescan per token: a short vocab
  for (size_t cut : {size_t{0}, size_t{3}, size_t{23}, size_t{24}, size_t{200}, file.size() / 2,
                     file.size() - 1}) {
    Result<GgufScan> scan = ScanGgufMetadata(std::string_view(file).substr(0, cut));
    ASSERT_TRUE(scan.ok()) << cut << ": " << scan.error().message;
    EXPECT_FALSE(scan->complete) << cut;
    EXPECT_GT(scan->bytes_needed, cut);
    EXPECT_LE(scan->bytes_needed, file.size());
  }
  size_t prefix = 16;
  int reads = 0;
  while (true) {
    Result<GgufScan> scan = ScanGgufMetadata(std::string_view(file).substr(0, prefix));
    ASSERT_TRUE(scan.ok());
    if (scan->complete) break;
    ASSERT_GT(scan->bytes_needed, prefix);
    prefix = scan->bytes_needed;
    ASSERT_LT(++reads, 1'000'000);
  }
  EXPECT_EQ(prefix, file.size());
}

std::string Message(std::string_view bytes) {
  Result<GgufScan> scan = ScanGgufMetadata(bytes);
  EXPECT_FALSE(scan.ok());
  return scan.ok() ? "" : scan.error().message;
}

TEST(GgufHeader, DamagedOrHostileHeadersAreErrorsThatSayWhere) {
  std::string be = GgufWriter().String("general.architecture", "llama").Build();
  be[4] = 0;
  be[5] = 0;
  be[6] = 0;
  be[7] = 3;  // version 3 written big-endian
  EXPECT_NE(Message(be).find("byte-swapped (big-endian) GGUF file: version 3"), std::string::npos);
  // Version 0 is no version at all, not a byte-swapped one (its low 16 bits are zero too).
  std::string v0 = GgufWriter().String("general.architecture", "llama").Build();
  v0[4] = v0[5] = v0[6] = v0[7] = 0;
  EXPECT_EQ(Message(v0), Message(GgufWriter().Build(0)));
  EXPECT_NE(Message(v0).find("GGUF version 0 (2 and 3 are read)"), std::string::npos) << Message(v0);
  EXPECT_EQ(Message(v0).find("byte-swapped"), std::string::npos);
  EXPECT_NE(Message("FUGG" + std::string(20, '\0')).find("big-endian"), std::string::npos);
  EXPECT_NE(Message(std::string(24, 'x')).find("not a GGUF file"), std::string::npos);
  EXPECT_NE(Message(GgufWriter().Build(1)).find("version 1"), std::string::npos);

  std::string nested;
  GgufWriter::Append(nested, 3, 8);
  nested += "a.b";
  GgufWriter::Append(nested, 9, 4);  // an array
  GgufWriter::Append(nested, 9, 4);  // of arrays
  EXPECT_NE(Message(GgufWriter().Raw(nested, 1).Build()).find("key \"a.b\": byte"),
            std::string::npos);
  EXPECT_NE(Message(GgufWriter().Raw(nested, 1).Build()).find("nested array"), std::string::npos);

  const std::string twice = GgufWriter().U32("x.y", 1).U32("x.y", 2).Build();
  EXPECT_NE(Message(twice).find("duplicate key"), std::string::npos);

  std::string bad_bool;
  GgufWriter::Append(bad_bool, 3, 8);
  bad_bool += "a.b";
  GgufWriter::Append(bad_bool, 7, 4);
  bad_bool.push_back(2);
  EXPECT_NE(Message(GgufWriter().Raw(bad_bool, 1).Build()).find("a bool of 2"), std::string::npos);

  // Lengths past the limits are refused from the length alone, before any byte is read.
  std::string huge_string;
  GgufWriter::Append(huge_string, 3, 8);
  huge_string += "a.b";
  GgufWriter::Append(huge_string, 8, 4);
  GgufWriter::Append(huge_string, 10'000'000'000ull, 8);  // a 10 GB string claim
  EXPECT_NE(Message(GgufWriter().Raw(huge_string, 1).Build()).find("10000000000 bytes"),
            std::string::npos);
  std::string huge_array;
  GgufWriter::Append(huge_array, 3, 8);
  huge_array += "a.b";
  GgufWriter::Append(huge_array, 9, 4);
  GgufWriter::Append(huge_array, 0, 4);
  GgufWriter::Append(huge_array, UINT64_MAX, 8);
  EXPECT_NE(Message(GgufWriter().Raw(huge_array, 1).Build()).find("elements"), std::string::npos);
  std::string many = GgufWriter().Build();
  many[16] = '\xff';
  many[17] = '\xff';  // 65,535 pairs is fine, but 0xffff...: too many
  many[23] = '\x01';
  EXPECT_NE(Message(many).find("key-value pairs"), std::string::npos);

  // A hostile key is quoted safely in the message.
  std::string hostile;
  GgufWriter::Append(hostile, 6, 8);
  hostile += "\x1b[2J\n";
  hostile.push_back('\0');
  GgufWriter::Append(hostile, 99, 4);
  const std::string m = Message(GgufWriter().Raw(hostile, 1).Build());
  EXPECT_NE(m.find("unknown value type 99"), std::string::npos);
  EXPECT_EQ(m.find('\x1b'), std::string::npos);
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace hubwatch

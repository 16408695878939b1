// hubwatch estimate: the estimator on the command line.

#include <charconv>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/cli_common.h"
#include "daemon/commands.h"
#include "estimator/estimate.h"
#include "estimator/format.h"
#include "estimator/report.h"

namespace hubwatch::cli {
namespace {

constexpr const char kUsage[] = R"(usage: hubwatch estimate CONFIG.json [options]
       hubwatch estimate [CONFIG.json] --safetensors-header FILE... [options]

Parameter count (exact, tensor by tensor), KV cache, GPU memory for full fine-tuning, LoRA,
QLoRA and serving, what fits on which card, and training cost, from a Hugging Face config.json.
An architecture that is not modelled, or no config.json at all, is estimated from the
checkpoint's own tensors when --safetensors-header gives them ("from the checkpoint's tensors:
structure not modelled": exact counts, approximate activations, the KV cache from config.json's
generic keys).

options:
  --safetensors-header FILE  a checkpoint shard's header: the raw JSON header, or the start of
                             the .safetensors file (8-byte length + header); repeat per shard.
                             Compares the model with the checkpoint tensor by tensor, or
                             is the model when its architecture is not modelled.
  --seq N                    training tokens per sample (default 2048)
  --batch N                  samples per training step, and sequences served unless
                             --serving-batch is given (default 1); the fit table finds the
                             largest batch per card
  --serving-batch N          sequences served at once for the serving row (default: --batch)
  --context N                serving context length per sequence (default 4096)
  --lora-rank R              LoRA / QLoRA adapter rank (default 16)
  --lora-targets LIST        adapted modules, e.g. q_proj,v_proj (default: every linear layer
                             but the head)
  --cards LIST               cards for the fit and cost tables (default: all known), e.g.
                             a100-80gb,h100,l4 or a custom id=MEMORY_GB:TFLOPS:USD_PER_HOUR
  --preset NAME              assumption preset: hubwatch (default, derived per tensor) or seed
                             (1.2 x 16 B/param training, x1.15 serving)
  --set NAME=VALUE           override one assumption (repeatable); every name and value is
                             listed in the report's Assumptions section. The settings runs
                             differ in: train.optimizer (adamw, adamw_8bit, paged_adamw_8bit,
                             paged_adamw_32bit, adafactor, sgd, sgd_momentum),
                             train.checkpointing (none, full, selective), train.loss
                             (standard, chunked, fused), train.sharding (none, zero1-3) with
                             train.gpus, train.master_bytes, train.grad_accum,
                             qlora.quantization and serve.quantization (nf4, gptq_int4,
                             awq_int4, fp8, int8), runtime.metric (card, reserved, allocated)
  --assume ARCH              read an unsupported model_type as ARCH (e.g. llama); the result
                             is marked approximate
  --json                     the machine form (schema/estimate.schema.json)
  --markdown                 the report as Markdown
  -h, --help                 show this help

Bad input (unreadable file, invalid JSON, missing or absurd sizes) prints one line on stderr
and exits with status 2.
)";

constexpr size_t kMaxConfigBytes = 16 << 20;

Result<int64_t> ParseCount(const std::string& flag, const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return Error::InvalidInput(flag + " needs a positive integer, got '" + Clip(text) + "'");
  }
  return v;
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

enum class Format { kText, kJson, kMarkdown };

struct Parsed {
  std::string config_path;
  std::vector<std::string> header_paths;
  EstimateInput input;
  Format format = Format::kText;
  bool help = false;
};

Result<Parsed> ParseArgs(const Args& args) {
  Parsed p;
  std::string preset = "hubwatch", cards;
  std::vector<std::pair<std::string, std::string>> sets;
  std::optional<int64_t> lora_rank;
  std::optional<std::vector<std::string>> lora_targets;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= args.size()) return Error::InvalidInput(Clip(a) + " needs a value");
      return args[++i];
    };
    auto count = [&](int64_t& out) -> Status {
      Result<std::string> v = value();
      if (!v.ok()) return v.error();
      Result<int64_t> n = ParseCount(a, *v);
      if (!n.ok()) return n.error();
      out = *n;
      return Status::Ok();
    };
    Status status;
    if (a == "-h" || a == "--help") {
      p.help = true;
    } else if (a == "--json") {
      p.format = Format::kJson;
    } else if (a == "--markdown") {
      p.format = Format::kMarkdown;
    } else if (a == "--seq") {
      status = count(p.input.workload.seq);
    } else if (a == "--batch") {
      status = count(p.input.workload.batch);
    } else if (a == "--context") {
      status = count(p.input.workload.context);
    } else if (a == "--serving-batch") {
      status = count(p.input.workload.serving_batch);
    } else if (a == "--lora-rank") {
      int64_t r = 0;
      status = count(r);
      lora_rank = r;
    } else if (a == "--safetensors-header" || a == "--lora-targets" || a == "--cards" ||
               a == "--preset" || a == "--set" || a == "--assume") {
      Result<std::string> v = value();
      if (!v.ok()) return v.error();
      if (a == "--safetensors-header") p.header_paths.push_back(*v);
      if (a == "--lora-targets") lora_targets = SplitList(*v);
      if (a == "--cards") cards = *v;
      if (a == "--preset") preset = *v;
      if (a == "--assume") p.input.build.assume = *v;
      if (a == "--set") {
        const size_t eq = v->find('=');
        if (eq == std::string::npos) return Error::InvalidInput("--set needs NAME=VALUE");
        sets.emplace_back(v->substr(0, eq), v->substr(eq + 1));
      }
    } else if (!a.empty() && a[0] == '-') {
      return Error::InvalidInput("unknown option " + Clip(a) +
                                 " (see hubwatch estimate --help)");
    } else if (p.config_path.empty()) {
      p.config_path = a;
    } else {
      return Error::InvalidInput("one CONFIG.json only, got '" + Clip(p.config_path) + "' and '" + Clip(a) +
                                 "'");
    }
    if (!status.ok()) return status.error();
  }
  if (p.help) return p;
  if (p.config_path.empty() && p.header_paths.empty()) {
    return Error::InvalidInput("missing CONFIG.json (see --help)");
  }

  Result<Assumptions> assumptions = PresetAssumptions(preset);
  if (!assumptions.ok()) return assumptions.error();
  p.input.assumptions = *assumptions;
  if (lora_rank) p.input.assumptions.lora_rank = *lora_rank;
  if (lora_targets) p.input.assumptions.lora_targets = *lora_targets;
  for (const auto& [name, v] : sets) {
    if (Status s = SetAssumption(p.input.assumptions, name, v); !s.ok()) return s.error();
  }
  Result<std::vector<Card>> parsed_cards = ParseCards(cards);
  if (!parsed_cards.ok()) return parsed_cards.error();
  p.input.cards = *parsed_cards;
  return p;
}

}  // namespace

int RunEstimate(const Args& args, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Error& e) {
    // Values are clipped where they are quoted; this bounds a message that quotes one anyway.
    err << "hubwatch estimate: " << EscapeControls(Clip(e.message, 2048)) << "\n";
    return 2;
  };
  Result<Parsed> parsed = ParseArgs(args);
  if (!parsed.ok()) return fail(parsed.error());
  Parsed& p = *parsed;
  if (p.help) {
    out << kUsage << "\nmodel_types modelled exactly (" << SupportedArchitectures().size()
        << "; any other is estimated from its checkpoint's tensors):\n";
    std::string line = " ";
    for (std::string_view type : SupportedArchitectures()) {
      if (line.size() + type.size() + 2 > 100) {
        out << line << "\n";
        line = " ";
      }
      line += " " + std::string(type);
    }
    out << line << "\n";
    return 0;
  }
  // Without a config.json, the checkpoint's headers alone give an estimate from its tensors.
  Result<std::string> config =
      p.config_path.empty() ? Result<std::string>(std::string("{}"))
                            : ReadFileUpTo(p.config_path, kMaxConfigBytes);
  if (!config.ok()) return fail(config.error());
  for (const std::string& path : p.header_paths) {
    Result<std::string> bytes = ReadFileUpTo(path, kHardMaxSafetensorsHeaderBytes + 8);
    if (!bytes.ok()) {
      // A whole .safetensors file is fine too: only its header is read.
      std::ifstream in(path, std::ios::binary);
      std::string prefix(8, '\0');
      if (!in.read(prefix.data(), 8)) return fail(bytes.error());
      Result<uint64_t> length = ReadSafetensorsHeaderLength(prefix, kHardMaxSafetensorsHeaderBytes);
      if (!length.ok())
        return fail({ErrorCode::kInvalidInput, Clip(path) + ": " + length.error().message});
      prefix.resize(8 + *length);
      if (!in.read(prefix.data() + 8, static_cast<std::streamsize>(*length))) {
        return fail({ErrorCode::kInvalidInput, Clip(path) + ": truncated safetensors header"});
      }
      bytes = std::move(prefix);
    }
    Result<SafetensorsHeader> header = ParseSafetensorsHeaderOrFilePrefix(*bytes);
    if (!header.ok()) {
      return fail({ErrorCode::kInvalidInput, Clip(path) + ": " + header.error().message});
    }
    p.input.headers.push_back(std::move(header).value());
  }
  Result<Estimate> estimate = EstimateModelFromText(*config, p.input);
  if (!estimate.ok()) {
    // The estimator names the file "config.json"; name the one the user gave instead. A flag's
    // error ("--lora-rank must be ...") is about the flag, not the file.
    std::string message = estimate.error().message;
    constexpr std::string_view kPrefix = "config.json: ";
    if (message.rfind(kPrefix, 0) == 0) message.erase(0, kPrefix.size());
    if (message.rfind("--", 0) != 0 && !p.config_path.empty()) {
      message = Clip(p.config_path) + ": " + message;
    }
    return fail({ErrorCode::kInvalidInput, message});
  }
  switch (p.format) {
    case Format::kJson:
      out << EstimateToJson(*estimate).dump(2) << "\n";
      break;
    case Format::kMarkdown:
      out << RenderMarkdown(*estimate);
      break;
    case Format::kText:
      out << RenderText(*estimate);
      break;
  }
  return 0;
}

}  // namespace hubwatch::cli

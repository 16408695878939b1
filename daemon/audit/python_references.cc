#include "daemon/audit/python_references.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/audit/findings_builder.h"
#include "daemon/audit/python_symbols.h"
#include "daemon/audit/python_tokens.h"

namespace hubwatch::audit {
namespace {

using Kind = PyToken::Kind;

struct Argument {
  std::string_view keyword;  // empty: positional
  size_t begin = 0;          // the value's tokens
  size_t end = 0;
  bool starred = false;  // *args or **kwargs
};

// What a recognised call takes, and where.
struct CallShape {
  std::string_view recognised_by;
  int model_position = 0;  // positional index of the model id (-1: keyword only)
  std::vector<std::string_view> model_keywords;
  std::string_view revision_keyword = "revision";
  bool hub_download = false;   // honours repo_type (a dataset or a space is not a model)
  bool has_tokenizer = false;  // also takes tokenizer= / tokenizer_revision=
  IdContext context = IdContext::kModelOnly;  // kOrgNameOnly: a bare name is not a Hub id here
};

// Whether a class named `name` is a Hugging Face loader (transformers, diffusers, PEFT,
// sentence-transformers), whose from_pretrained takes a bare canonical Hub name ("gpt2"):
// Auto*, *For<Task>, *Model, *ModelWith*, *Tokenizer*, *Processor, *Config, *Pipeline,
// *FeatureExtractor, *Scheduler, SentenceTransformer. Other libraries' from_pretrained
// (TransformerLens's HookedTransformer.from_pretrained("pythia-70m")) take their own aliases.
bool IsHubLoaderClass(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (name.rfind("Auto", 0) == 0 || name.find("Tokenizer") != std::string_view::npos ||
      name.find("ModelWith") != std::string_view::npos || name == "SentenceTransformer") {
    return true;
  }
  for (size_t at = name.find("For"); at != std::string_view::npos; at = name.find("For", at + 1)) {
    if (at > 0 && at + 3 < name.size() && name[at + 3] >= 'A' && name[at + 3] <= 'Z') return true;
  }
  for (std::string_view suffix :
       {"Model", "Processor", "Config", "Pipeline", "FeatureExtractor", "Scheduler"}) {
    if (ends_with(suffix)) return true;
  }
  return false;
}

CallShape Shape(std::string_view recognised_by, int model_position,
                std::vector<std::string_view> model_keywords) {
  CallShape shape;
  shape.recognised_by = recognised_by;
  shape.model_position = model_position;
  shape.model_keywords = std::move(model_keywords);
  return shape;
}

class PythonScanner {
 public:
  PythonScanner(std::string_view file, std::string_view source)
      : source_(source), tokens_(TokenizePython(source)), symbols_(source, tokens_), out_(file) {}

  FileFindings Run() {
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (tokens_[i].kind != Kind::kName || !IsOp(i + 1, "(")) continue;
      if (i > 0 && (IsName(i - 1, "def") || IsName(i - 1, "class"))) continue;
      CallShape shape;
      if (ShapeOf(i, shape)) Call(i + 1, shape);
    }
    symbols_.ForEachUnusedModelLiteral([&](size_t index) {
      const PyToken& t = tokens_[index];
      out_.Add("python:model-constant", t.line, t.column,
               SourceValue::Literal(symbols_.view().StringValue(index)), SourceValue::Absent(),
               IdContext::kOrgNameOnly);
    });
    return out_.Take();
  }

 private:
  bool IsOp(size_t i, std::string_view op) const {
    return i < tokens_.size() && tokens_[i].kind == Kind::kOp && PyText(source_, tokens_[i]) == op;
  }
  bool IsName(size_t i, std::string_view name) const {
    return i < tokens_.size() && tokens_[i].kind == Kind::kName &&
           PyText(source_, tokens_[i]) == name;
  }

  // The receiver's last name in `receiver.callee(`, or "" when the callee stands alone; "()"
  // when the receiver is itself a call's result (super().from_pretrained).
  std::string_view Receiver(size_t callee) const {
    if (callee < 2 || !IsOp(callee - 1, ".")) return "";
    if (tokens_[callee - 2].kind == Kind::kName) return PyText(source_, tokens_[callee - 2]);
    return "()";
  }

  bool ShapeOf(size_t callee, CallShape& shape) const {
    std::string_view name = PyText(source_, tokens_[callee]);
    std::string_view receiver = Receiver(callee);
    if (name == "from_pretrained") {
      if (receiver.empty() || receiver == "()" || receiver == "self" || receiver == "cls")
        return false;
      shape.recognised_by = "python:from_pretrained";
      if (!IsHubLoaderClass(receiver)) shape.context = IdContext::kOrgNameOnly;
      shape.model_keywords = {"pretrained_model_name_or_path", "pretrained_model_or_path"};
      if (receiver.rfind("PeftModel", 0) == 0) {  // PeftModel.from_pretrained(model, adapter_id)
        shape.model_position = 1;
        shape.model_keywords = {"model_id"};
      }
      return true;
    }
    bool free = receiver.empty();
    if (name == "pipeline" && (free || receiver == "transformers")) {
      shape = Shape("python:pipeline", 1, {"model"});
      return true;
    }
    if (name == "hf_hub_download" || name == "snapshot_download") {
      shape =
          Shape(name == "hf_hub_download" ? "python:hf_hub_download" : "python:snapshot_download",
                0, {"repo_id"});
      shape.hub_download = true;
      return true;
    }
    if ((name == "SentenceTransformer" || name == "CrossEncoder" || name == "SparseEncoder") &&
        (free || receiver == "sentence_transformers")) {
      shape = Shape("python:sentence-transformers", 0, {"model_name_or_path", "model_name"});
      return true;
    }
    if ((name == "LLM" && (free || receiver == "vllm")) || name == "EngineArgs" ||
        name == "AsyncEngineArgs") {
      shape = Shape("python:vllm", name == "LLM" ? 0 : -1, {"model"});
      shape.has_tokenizer = true;
      return true;
    }
    if (name == "InferenceClient" || name == "AsyncInferenceClient") {
      shape = Shape("python:inference-client", 0, {"model"});
      return true;
    }
    if (name == "InferenceAPIClient" || name == "InferenceAPIAsyncClient") {
      shape = Shape("python:inference-client", 0, {"repo_id"});
      return true;
    }
    return false;
  }

  std::vector<Argument> Arguments(size_t open) const {
    std::vector<Argument> args;
    size_t close = symbols_.view().MatchingBracket(open);
    size_t j = open + 1;
    while (j < close) {
      Argument a;
      a.begin = j;
      if (IsOp(j, "*") || IsOp(j, "**")) a.starred = true;
      if (tokens_[j].kind == Kind::kName && IsOp(j + 1, "=")) {
        a.keyword = PyText(source_, tokens_[j]);
        a.begin = j + 2;
      }
      j = a.end = symbols_.view().ItemEnd(j, close);
      if (a.end > a.begin) args.push_back(a);
      ++j;
    }
    return args;
  }

  const Argument* Find(const std::vector<Argument>& args, int position,
                       const std::vector<std::string_view>& keywords) const {
    int seen = 0;
    for (const Argument& a : args) {
      if (a.starred) continue;
      if (a.keyword.empty() && seen++ == position) return &a;
      for (std::string_view k : keywords) {
        if (a.keyword == k) return &a;
      }
    }
    return nullptr;
  }

  SourceValue ValueOf(const Argument* a) {
    return a == nullptr ? SourceValue::Absent() : symbols_.Evaluate(a->begin, a->end);
  }

  void Call(size_t open, const CallShape& shape) {
    std::vector<Argument> args = Arguments(open);
    if (shape.hub_download) {
      SourceValue type = ValueOf(Find(args, -1, {"repo_type"}));
      if (type.kind == SourceValue::Kind::kLiteral && type.text != "model") return;
    }
    Report(shape, Find(args, shape.model_position, shape.model_keywords),
           ValueOf(Find(args, -1, {shape.revision_keyword})));
    if (shape.has_tokenizer) {
      Report(shape, Find(args, -1, {"tokenizer"}), ValueOf(Find(args, -1, {"tokenizer_revision"})));
    }
  }

  void Report(const CallShape& shape, const Argument* model, const SourceValue& revision) {
    if (model == nullptr) return;
    const PyToken& at = tokens_[model->begin];
    out_.Add(shape.recognised_by, at.line, at.column, ValueOf(model), revision, shape.context);
  }

  std::string_view source_;
  std::vector<PyToken> tokens_;
  PythonSymbols symbols_;
  FindingsBuilder out_;
};

}  // namespace

FileFindings FindPythonReferences(std::string_view file, std::string_view source) {
  return PythonScanner(file, source).Run();
}

}  // namespace hubwatch::audit

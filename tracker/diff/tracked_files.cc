#include "tracker/diff/tracked_files.h"

namespace hubwatch::diff {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view FileRoleName(FileRole role) {
  switch (role) {
    case FileRole::kNone:
      return "none";
    case FileRole::kConfig:
      return "config";
    case FileRole::kGenerationConfig:
      return "generation_config";
    case FileRole::kTokenizer:
      return "tokenizer";
    case FileRole::kChatTemplate:
      return "chat_template";
    case FileRole::kWeights:
      return "weights";
    case FileRole::kWeightsIndex:
      return "weights_index";
    case FileRole::kProcessor:
      return "processor";
    case FileRole::kRemoteCode:
      return "remote_code";
  }
  return "none";
}

FileRole RoleOfPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (EndsWith(name, ".safetensors.index.json") || EndsWith(name, ".bin.index.json")) {
    return FileRole::kWeightsIndex;
  }
  for (std::string_view ext :
       {".safetensors", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx"}) {
    if (EndsWith(name, ext)) return FileRole::kWeights;
  }
  if (EndsWith(name, ".bin") && (name.starts_with("pytorch_model") || name.starts_with("model"))) {
    return FileRole::kWeights;
  }
  if (EndsWith(name, ".py")) return FileRole::kRemoteCode;
  if (slash != std::string_view::npos) return FileRole::kNone;
  if (name == kConfigFile) return FileRole::kConfig;
  if (name == kGenerationConfigFile) return FileRole::kGenerationConfig;
  if (name == kTokenizerJsonFile || name == kTokenizerConfigFile || name == kSpecialTokensMapFile ||
      name == kAddedTokensFile) {
    return FileRole::kTokenizer;
  }
  if (name == kChatTemplateJinjaFile || name == kChatTemplateJsonFile) {
    return FileRole::kChatTemplate;
  }
  if (name == "processor_config.json" || name == "preprocessor_config.json" ||
      name == "video_preprocessor_config.json") {
    return FileRole::kProcessor;
  }
  return FileRole::kNone;
}

}  // namespace hubwatch::diff

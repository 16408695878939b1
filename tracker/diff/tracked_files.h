#pragma once

// Which diff engine cares about a repository file. The pipeline fetches the contents of the
// small tracked files (every role but kWeights, whose headers it reads instead); the files
// engine says which engine a removed or renamed file mattered to. Pure, thread-safe.
//
// Small files count at the repository root only ("text_encoder/config.json" is another
// component's config); weight files count anywhere.

#include <string_view>

namespace hubwatch::diff {

// The root files the engines read.
inline constexpr std::string_view kConfigFile = "config.json";
inline constexpr std::string_view kGenerationConfigFile = "generation_config.json";
inline constexpr std::string_view kTokenizerJsonFile = "tokenizer.json";
inline constexpr std::string_view kTokenizerConfigFile = "tokenizer_config.json";
inline constexpr std::string_view kSpecialTokensMapFile = "special_tokens_map.json";
inline constexpr std::string_view kAddedTokensFile = "added_tokens.json";
inline constexpr std::string_view kChatTemplateJinjaFile = "chat_template.jinja";
inline constexpr std::string_view kChatTemplateJsonFile = "chat_template.json";

enum class FileRole {
  kNone,              // not read by any engine (README.md, .gitattributes, ...)
  kConfig,            // config.json
  kGenerationConfig,  // generation_config.json
  kTokenizer,         // tokenizer.json, tokenizer_config.json, special_tokens_map.json,
                      // added_tokens.json
  kChatTemplate,      // chat_template.jinja, chat_template.json
  kWeights,           // *.safetensors, pytorch_model*.bin, *.pt, *.pth, *.ckpt, *.gguf, *.h5,
                      // *.msgpack, *.onnx
  kWeightsIndex,      // *.safetensors.index.json, *.bin.index.json
  kProcessor,         // processor_config.json, preprocessor_config.json,
                      // video_preprocessor_config.json
  kRemoteCode,        // *.py (trust_remote_code modeling / configuration code)
};
std::string_view FileRoleName(FileRole role);  // "none", "config", ..., "remote_code"

FileRole RoleOfPath(std::string_view path);

}  // namespace hubwatch::diff

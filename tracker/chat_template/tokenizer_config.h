#pragma once

// Reads the chat template and special tokens out of a tokenizer_config.json, as transformers
// passes them to the template: `chat_template` (a string, or a list of {name, template} from
// which "default" is taken), and bos_token, eos_token, unk_token, sep_token, pad_token,
// cls_token, mask_token, additional_special_tokens (plain strings or AddedToken objects, whose
// "content" is used; null tokens are left out).
//
// Pure; thread-safe.

#include "estimator/base/result.h"
#include "nlohmann/json.hpp"
#include "tracker/chat_template/render_diff.h"

namespace hubwatch::chat_template {

// Fails (kUnsupported) when the config has no usable chat template, (kInvalidInput) when it is
// not an object or chat_template has the wrong shape.
Result<TemplateRevision> TemplateFromTokenizerConfig(const nlohmann::ordered_json& config);

}  // namespace hubwatch::chat_template

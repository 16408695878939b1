#pragma once

// The model references of one YAML, JSON or TOML config of the common fine-tuning and serving
// tools (axolotl, LLaMA-Factory, TRL, vLLM, PEFT's adapter_config.json, ...): a value under a
// model key (base_model, model_name_or_path, model, model_id, pretrained_model_name_or_path,
// tokenizer, tokenizer_name, ...) pinned by a revision key in the same mapping (revision,
// model_revision, base_model_revision, tokenizer_revision). Only "org/name" values count in a
// config: the same keys often hold local paths or run labels. Recognised as "yaml:KEY",
// "json:KEY" or "toml:KEY". Also read: Kubernetes-style environment lists (`- name: MODEL_ID`
// with a sibling `value: ORG/NAME`, pinned by a `- name: REVISION` item of the same list;
// "yaml:env:MODEL_ID"), and in YAML, command-line argument lists (yaml_args.h, "yaml:args").
// Line-oriented readers, not full parsers: linear time, bounded nesting, any bytes in. Pure.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

enum class ConfigFormat { kYaml, kJson, kToml };

FileFindings FindConfigReferences(std::string_view file, std::string_view text,
                                  ConfigFormat format);

}  // namespace hubwatch::audit

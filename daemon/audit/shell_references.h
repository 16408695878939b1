#pragma once

// The model references of one shell script, Dockerfile or Makefile: the command lines that
// download or serve a model -
//   huggingface-cli download ORG/NAME [--revision R]      "shell:huggingface-cli-download"
//   hf download ORG/NAME [--revision R]                    "shell:hf-download"
//   vllm serve ORG/NAME [--revision R] [--tokenizer T]     "shell:vllm-serve"
//   python -m vllm.entrypoints.openai.api_server --model X "shell:vllm-api-server"
//   text-generation-launcher --model-id X --revision R     "shell:text-generation-launcher"
// - and, on any other command, a model flag (--model_name_or_path, --base_model, --model,
// --model-id, ...) holding an "org/name" ("shell:model-flag"). `$VAR`, `${VAR}`,
// `${VAR:-default}` and make's `$(VAR)` resolve through the file's literal assignments (shell,
// `export`, Dockerfile ENV/ARG, make `=`/`:=`/`?=`); anything else is reported unresolved,
// and so is a variable assigned in a conditional branch (if/case/loop bodies, functions: see
// shell_variables.h), whatever value that branch gives it.
// Dataset and space downloads (--repo-type) are not models. Pure.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

FileFindings FindShellReferences(std::string_view file, std::string_view text);

}  // namespace hubwatch::audit

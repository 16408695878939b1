#pragma once

// The model references of one Python file: the calls that load, download or serve a model
// (from_pretrained on any class - a bare name such as "gpt2" only on a Hugging Face loader class
// (Auto*, *For<Task>, *Model, *Tokenizer*, *Processor, *Config, *Pipeline, ...), elsewhere only
// "org/name" - pipeline, hf_hub_download, snapshot_download,
// SentenceTransformer/CrossEncoder, vLLM's LLM and EngineArgs, InferenceClient) with their
// revision arguments, ids traced through constants, argparse defaults, parameters (the literal
// every call in the file passes) and the environment's literal defaults (python_symbols.h);
// and string literals of model-named variables that no such call reads ("python:model-constant").
// Comments and docstrings are never read. Pure.

#include <string_view>

#include "daemon/audit/reference.h"

namespace hubwatch::audit {

FileFindings FindPythonReferences(std::string_view file, std::string_view source);

}  // namespace hubwatch::audit

#pragma once

// Command-line arguments written as a YAML sequence of scalars (Kubernetes and Cloud Run
// `args:` / `command:`, compose `command:`, ...), block (`- --model-id` then `- org/name`, or
// `- "--model=org/name"`) or flow (`args: ["--model", "org/name"]`, across lines too): a model
// flag of the shell reader's vocabulary (model_flags.h) holding an "org/name", pinned by a
// revision flag of the same sequence, as "yaml:args". Block scalars (| and >) and sequences of
// mappings are not argument lists. One forward pass over the lines; any bytes in.

#include <string_view>

#include "daemon/audit/findings_builder.h"

namespace hubwatch::audit {

void ReadYamlArgs(std::string_view text, FindingsBuilder& out);

}  // namespace hubwatch::audit

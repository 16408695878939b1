#pragma once

// The stored form of a safetensors header (column safetensors_headers.tensors): a JSON object
// {"tensors": {name: [dtype, shape, data_begin, data_end]}, "metadata": {...}, "data_size": n}.
// RevisionWriter writes it, RevisionStore::GetHeader reads it back. Pure functions;
// thread-safe. Include only from tracker/store/*.cc.

#include <nlohmann/json.hpp>
#include <string>

#include "estimator/base/result.h"
#include "estimator/formats/safetensors_header.h"

namespace hubwatch::store {

nlohmann::json HeaderToJson(const SafetensorsHeader& h);

// The header HeaderToJson wrote as `text`; an Io error "store: <what> is damaged: ..." when the
// text is not what it writes (never an exception).
Result<SafetensorsHeader> HeaderFromJson(const std::string& text, const std::string& what);

}  // namespace hubwatch::store

#pragma once

// Bytes of a linear weight held quantized: the packed values plus the scales, zero points and
// indices each scheme keeps beside them (qlora.block_size for NF4, quant.group_size for GPTQ and
// AWQ). Pure function; thread-safe.

#include "estimator/assumptions.h"
#include "estimator/model_graph.h"

namespace hubwatch {

// Bytes of every copy of linear weight `t` under `scheme`; kNone: `unquantized_bytes` per
// parameter. REQUIRES: t.is_linear().
double QuantizedLinearBytes(const TensorSpec& t, Quantization scheme, double unquantized_bytes,
                            const Assumptions& a);

}  // namespace hubwatch

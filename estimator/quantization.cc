#include "estimator/quantization.h"

#include <cmath>

namespace hubwatch {

double QuantizedLinearBytes(const TensorSpec& t, Quantization scheme, double unquantized_bytes,
                            const Assumptions& a) {
  const double elements = static_cast<double>(t.ParametersPerCopy().value());
  const double in = static_cast<double>(t.linear_in), out = elements / in;
  const double groups = std::ceil(in / static_cast<double>(a.quant_group)) * out;
  double bytes = 0;
  switch (scheme) {
    case Quantization::kNone:
      bytes = elements * unquantized_bytes;
      break;
    case Quantization::kNf4: {
      const double blocks = std::ceil(elements / static_cast<double>(a.qlora_block));
      // Double quantization: 8-bit absmax per block, an fp32 scale per 256 blocks and an fp32
      // offset; otherwise an fp32 absmax per block.
      const double scales =
          a.qlora_double_quant ? blocks + std::ceil(blocks / 256) * 4 + 4 : blocks * 4;
      bytes = elements / 2 + scales;
      break;
    }
    case Quantization::kGptqInt4:  // qweight, fp16 scales, packed 4-bit zeros, int32 g_idx
      bytes = elements / 2 + groups * 2.5 + in * 4;
      break;
    case Quantization::kAwqInt4:  // qweight, fp16 scales, packed 4-bit zeros
      bytes = elements / 2 + groups * 2.5;
      break;
    case Quantization::kFp8:  // e4m3 values, one fp32 scale
      bytes = elements + 4;
      break;
    case Quantization::kInt8:  // int8 values, an fp32 scale per output row
      bytes = elements + out * 4;
      break;
  }
  return bytes * static_cast<double>(t.copies);
}

}  // namespace hubwatch

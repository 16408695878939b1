#pragma once

// Runs one derivative round (pipeline/derivative_check.h) of a PipelineTest to its end.

#include <chrono>
#include <optional>

#include "tests/pipeline/pipeline_env.h"
#include "tracker/pipeline/derivative_check.h"

namespace hubwatch::pipeline {

inline DerivativeRound RunDerivativeRound(boost::asio::io_context& io, hub::HubClient& client,
                                          DerivativeRoundInput input) {
  std::optional<DerivativeRound> round;
  CheckDerivatives(client, std::move(input), [&](DerivativeRound r) { round = std::move(r); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!round && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  if (!round) {
    ADD_FAILURE() << "the derivative round did not end in 120 s";
    return {};
  }
  return std::move(*round);
}

// Every relation, `max`, and the heads already checked (nothing else known).
inline DerivativeRound RunDerivativeRound(boost::asio::io_context& io, hub::HubClient& client,
                                          const std::string& upstream, size_t max,
                                          std::map<std::string, std::string> checked_heads) {
  DerivativeRoundInput input;
  input.upstream = upstream;
  input.relations = {derivatives::Relation::kFinetune, derivatives::Relation::kAdapter,
                     derivatives::Relation::kQuantized, derivatives::Relation::kMerge};
  input.max = max;
  input.checked_heads = std::move(checked_heads);
  return RunDerivativeRound(io, client, std::move(input));
}

}  // namespace hubwatch::pipeline

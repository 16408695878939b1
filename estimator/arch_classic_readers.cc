// The config.json readers of the classic GPT-style decoders (classic_decoder.h): one per family,
// each turning the keys, aliases and defaults of its config class into a Decoder.

#include "estimator/classic_decoder.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "estimator/graph_builder.h"

namespace hubwatch::classic {

using namespace build;  // NOLINT: internal helpers

namespace {

TensorSpec Spec(std::string name, TensorShape shape, TensorRole role = TensorRole::kParameter) {
  TensorSpec t;
  t.name = std::move(name);
  t.shape = shape;
  t.role = role;
  return t;
}

// hidden / heads, which every one of these families requires to divide evenly.
int64_t SplitHeads(ConfigReader& config, int64_t hidden, int64_t heads) {
  if (hidden % heads != 0) {
    config.Fail("the hidden size " + std::to_string(hidden) +
                " is not divisible by the number of attention heads " + std::to_string(heads));
    return 1;
  }
  return hidden / heads;
}

void CheckKvHeads(ConfigReader& config, int64_t heads, int64_t kv_heads) {
  if (kv_heads > heads || heads % kv_heads != 0) {
    config.Fail("the number of key/value heads " + std::to_string(kv_heads) +
                " does not divide the number of attention heads " + std::to_string(heads));
  }
}

// A fraction of each head that rotary embeddings rotate, for labels: "25%".
std::string Percent(double fraction) {
  return std::to_string(static_cast<int64_t>(fraction * 100 + 0.5)) + "%";
}

}  // namespace

// --- opt: OPTForCausalLM ---------------------------------------------------------------------
// Learned positions with 2 extra rows (OPTLearnedPositionalEmbedding's offset), project_in/out
// when word_embed_proj_dim differs from hidden_size (opt-350m), a final_layer_norm only before
// the head of a pre-norm model, biases everywhere (enable_bias), a head tied to embed_tokens.
Decoder ReadOpt(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size", "d_model"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.heads = d.kv_heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  d.inner = config.Positive({"ffn_dim"}, kMaxWidth);
  d.embed_width = config.Positive({"word_embed_proj_dim"}, kMaxWidth, d.hidden,
                                  "word_embed_proj_dim absent: hidden_size (no project_in/out)");
  d.max_positions = config.Positive({"max_position_embeddings"}, kMaxPositions, 2048,
                                    "max_position_embeddings absent: OPT's default 2048");
  d.position_rows = d.max_positions + 2;
  d.qkv_bias = d.out_bias = d.mlp_bias = config.Flag({"enable_bias"}, true);
  d.norm_kind = config.Flag({"layer_norm_elementwise_affine"}, true) ? NormKind::kLayer
                                                                     : NormKind::kLayerNoAffine;
  const bool norm_before = config.Flag({"do_layer_norm_before"}, true);
  d.layout = norm_before ? BlockLayout::kPreNorm : BlockLayout::kPostNorm;
  // _remove_final_layer_norm only keeps checkpoints fine-tuned before transformers 4.20.1 loading.
  d.final_norm = norm_before && !config.Flag({"_remove_final_layer_norm"}, false);
  d.activation = config.String({"activation_function"}, "relu");
  d.tied = config.Flag({"tie_word_embeddings"}, true);
  d.family =
      std::string("OPT decoder: learned positions (offset 2), ") +
      (norm_before ? "pre-LayerNorm" : "post-LayerNorm") + ", " + d.activation +
      " MLP, biased linears" +
      (d.embed_width != d.hidden ? ", embeddings projected " + std::to_string(d.embed_width) +
                                       " <-> " + std::to_string(d.hidden)
                                 : std::string());
  return d;
}

// --- bloom: BloomForCausalLM -----------------------------------------------------------------
// ALiBi (no position table), a LayerNorm right after the word embeddings, fused biased
// query_key_value, an MLP of 4 * hidden_size whatever n_inner says, a head tied to the embedding.
Decoder ReadBloom(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  // BloomConfig takes n_embed over hidden_size, and maps n_layer / n_head to the usual names.
  d.hidden = config.Positive({"n_embed", "hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"n_layer", "num_hidden_layers"}, kMaxLayers);
  d.heads = d.kv_heads = config.Positive({"n_head", "num_attention_heads"}, kMaxHeads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  d.inner = 4 * d.hidden;
  if (std::optional<int64_t> n_inner = config.OptionalPositive({"n_inner"}, kMaxWidth);
      n_inner && *n_inner != d.inner) {
    config.Note("n_inner " + std::to_string(*n_inner) +
                " ignored: BloomMLP is always 4 * hidden_size wide");
  }
  // ALiBi has no position limit; seq_length is the training length where the config gives it.
  d.max_positions = config.OptionalPositive({"seq_length"}, kMaxPositions).value_or(0);
  d.embed_norm = true;
  d.activation = "gelu_new";  // BloomGelu: the tanh approximation
  d.tied = config.Flag({"tie_word_embeddings"}, true);
  d.attention_label = ", ALiBi";
  d.family =
      "BLOOM decoder: ALiBi, LayerNorm on the embeddings, fused query_key_value, GELU "
      "MLP, biased linears";
  return d;
}

// --- gptj: GPTJForCausalLM -------------------------------------------------------------------
// One LayerNorm per block feeding attention and MLP in parallel, q/k/v/out_proj without biases,
// rotary on the first rotary_dim dimensions of each head, an untied head with a bias. Its
// checkpoints (written by transformers < 4.31, whose buffers were persistent) store each layer's
// causal mask attn.bias (uint8 [1, 1, n_positions, n_positions]) and the scalar masked_bias.
Decoder ReadGptj(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"n_embd", "hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"n_layer", "num_hidden_layers"}, kMaxLayers);
  d.heads = d.kv_heads = config.Positive({"n_head", "num_attention_heads"}, kMaxHeads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  d.max_positions = config.Positive({"n_positions", "max_position_embeddings"}, kMaxPositions, 2048,
                                    "n_positions absent: GPT-J's default 2048");
  d.inner =
      config.Positive({"n_inner"}, kMaxWidth, 4 * d.hidden, "n_inner absent or null: 4 * n_embd");
  d.activation = config.String({"activation_function"}, "gelu_new");
  d.qkv_bias = d.out_bias = false;
  d.layout = BlockLayout::kParallel;
  d.tied = config.Flag({"tie_word_embeddings"}, false);
  d.head_bias = true;
  const std::optional<int64_t> rotary = config.OptionalPositive({"rotary_dim"}, kMaxWidth);
  d.attention_label = rotary ? ", rotary on " + std::to_string(*rotary) + " dims" : ", rotary";
  TensorSpec mask = Spec("bias", {1, 1, d.max_positions, d.max_positions}, TensorRole::kBuffer);
  mask.dtype = "U8";
  d.attention_extra.push_back(std::move(mask));
  // -1e9, a float buffer: the model's dtype once the model is cast (the float16 revision).
  d.attention_extra.push_back(Spec("masked_bias", {}, TensorRole::kBuffer));
  d.family =
      "GPT-J decoder: attention and MLP in parallel after one LayerNorm, rotary, "
      "unbiased q/k/v/out_proj, biased untied head";
  return d;
}

// --- gpt_bigcode: GPTBigCodeForCausalLM ------------------------------------------------------
// GPT-2's layout with nn.Linear instead of Conv1D (weights stored [out, in]) and, with
// multi_query, one key/value head inside the fused c_attn. Its causal mask buffer is not
// persistent: checkpoints do not store it.
Decoder ReadGptBigcode(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"n_embd", "hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"n_layer", "num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"n_head", "num_attention_heads"}, kMaxHeads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  const bool multi_query =
      config.Flag({"multi_query"}, true, "multi_query absent: GPTBigCode's default (one KV head)");
  d.kv_heads = multi_query ? 1 : d.heads;
  if (config.Flag({"add_cross_attention"}, false)) {
    config.Fail("add_cross_attention: GPTBigCode's cross-attention blocks are not modelled");
  }
  d.max_positions = config.Positive({"n_positions", "max_position_embeddings"}, kMaxPositions, 1024,
                                    "n_positions absent: GPTBigCode's default 1024");
  d.position_rows = d.max_positions;
  d.inner =
      config.Positive({"n_inner"}, kMaxWidth, 4 * d.hidden, "n_inner absent or null: 4 * n_embd");
  d.activation = config.String({"activation_function"}, "gelu_pytorch_tanh");
  d.tied = config.Flag({"tie_word_embeddings"}, true);
  d.loss_in_fp32 = false;  // CrossEntropyLoss on shift_logits in the model's dtype
  d.family = std::string("GPTBigCode decoder: learned positions, fused c_attn") +
             (multi_query ? " with one shared key/value head (multi-query)" : "") +
             ", LayerNorm, GELU MLP, biased linears";
  return d;
}

namespace {

// A nested object of config.json (MPT's attn_config), read with its own reader. When it goes
// out of scope its first failure and its notes become the outer reader's, under the object's
// name ("attn_config: missing required key kv_n_heads"). Absent or null reads as {}.
class NestedConfig {
 public:
  NestedConfig(ConfigReader& outer, const char* key) : outer_(outer), key_(key) {
    const nlohmann::json* v = outer.Find({key});
    if (v && !v->is_object()) outer.Fail(std::string(key) + " must be an object");
    reader_.emplace(v && v->is_object() ? *v : empty_);
  }
  ~NestedConfig() {
    if (!reader_->ok()) {
      std::string message = reader_->error().message;
      const std::string_view prefix = "config.json: ";
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      outer_.Fail(key_ + ": " + message);
    }
    for (std::string& note : reader_->TakeNotes()) outer_.Note(key_ + ": " + note);
  }
  NestedConfig(const NestedConfig&) = delete;
  NestedConfig& operator=(const NestedConfig&) = delete;
  ConfigReader& operator*() { return *reader_; }
  ConfigReader* operator->() { return &*reader_; }

 private:
  ConfigReader& outer_;
  std::string key_;
  const nlohmann::json empty_ = nlohmann::json::object();
  std::optional<ConfigReader> reader_;
};

}  // namespace

// --- mpt: MPTForCausalLM (mosaicml's remote code, which its config.json names in auto_map) --
// Fused Wqkv, ALiBi or rotary or a learned table (learned_pos_emb counts only without either),
// no_bias removing every bias (LayerNorms' too), an MLP of expansion_ratio * d_model, a head
// tied to wte. transformers' native MptForCausalLM reads the same checkpoints when no_bias is
// true and expansion_ratio 4, the only layout it builds.
Decoder ReadMpt(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"d_model", "hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"n_layers", "num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"n_heads", "num_attention_heads"}, kMaxHeads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  d.max_positions = config.Positive({"max_seq_len", "max_position_embeddings"}, kMaxPositions, 2048,
                                    "max_seq_len absent: MPT's default 2048");
  const bool bias = !config.Flag({"no_bias"}, false, "no_bias absent: MPT's default (biases)");
  d.qkv_bias = d.out_bias = d.mlp_bias = bias;
  const std::string norm = config.String({"norm_type"}, "low_precision_layernorm");
  if (norm == "layernorm" || norm == "low_precision_layernorm") {
    d.norm_kind = NormKind::kLayer;
    d.norm_bias = bias;
  } else if (norm == "rmsnorm" || norm == "low_precision_rmsnorm") {
    d.norm_kind = NormKind::kRms;
    d.norm_bias = false;
  } else {
    config.Fail("norm_type \"" + norm +
                "\" is not modelled (layernorm, low_precision_layernorm, "
                "rmsnorm, low_precision_rmsnorm)");
  }

  std::string positions;
  {
    NestedConfig attn(config, "attn_config");
    const std::string type = attn->String({"attn_type"}, "multihead_attention");
    if (type == "multihead_attention") {
      d.kv_heads = d.heads;
    } else if (type == "multiquery_attention") {
      d.kv_heads = 1;
    } else if (type == "grouped_query_attention") {
      d.kv_heads = attn->Positive({"kv_n_heads"}, kMaxHeads);
      CheckKvHeads(config, d.heads, d.kv_heads);
    } else {
      attn->Fail("attn_type \"" + type + "\" is not modelled");
    }
    const bool alibi = attn->Flag({"alibi"}, false);
    const bool rope = attn->Flag({"rope"}, false);
    if (alibi) {
      positions = "ALiBi";
    } else if (rope) {
      positions = "rotary";
    } else if (config.Flag({"learned_pos_emb"}, true)) {
      d.position_rows = d.max_positions;
      positions = "learned positions";
    } else {
      positions = "no positional encoding";
    }
    if (attn->Flag({"qk_gn"}, false)) attn->Fail("qk_gn is not modelled");
    if (attn->Flag({"qk_ln"}, false)) {
      const int64_t widths[] = {d.hidden, d.kv_heads * d.head_dim};
      const char* names[] = {"q_ln", "k_ln"};
      for (int i = 0; i < 2; ++i) {
        d.attention_extra.push_back(Spec(std::string(names[i]) + ".weight", {widths[i]}));
        if (d.norm_bias)
          d.attention_extra.push_back(Spec(std::string(names[i]) + ".bias", {widths[i]}));
      }
      d.qk_norm_width = widths[0] + widths[1];
    }
    d.attention_label = ", " + positions;
  }
  {
    NestedConfig ffn(config, "ffn_config");
    const std::string type = ffn->String({"ffn_type"}, "mptmlp");
    if (type == "mptglu") {
      d.gated = true;
    } else if (type != "mptmlp") {
      ffn->Fail("ffn_type \"" + type + "\" is not modelled (mptmlp, mptglu)");
    }
    const int64_t ratio = config.Positive({"expansion_ratio"}, kMaxWidth, 4,
                                          "expansion_ratio absent: MPT's default 4");
    d.inner = ffn->Positive({"ffn_hidden_size"}, kMaxWidth, ratio * d.hidden);
    // torch.nn.GELU (exact) unless ffn_act_fn names another: {"name": "gelu", ...}.
    d.activation = "gelu";
    if (const nlohmann::json* act = ffn->Find({"ffn_act_fn"}); act && act->is_object()) {
      auto name = act->find("name");
      if (name != act->end() && name->is_string()) d.activation = name->get<std::string>();
    }
  }
  d.tied = config.Flag({"tie_word_embeddings"}, true);
  d.family = "MPT decoder: " + positions + ", fused Wqkv" +
             (d.kv_heads == d.heads ? ""
              : d.kv_heads == 1     ? " (multi-query)"
                                    : " (grouped KV)") +
             (bias ? ", biased linears" : ", no biases") + ", " +
             ActivationLabel(d.gated, d.activation) + " MLP" + (d.tied ? ", tied head" : "");
  return d;
}

// --- stablelm: StableLmForCausalLM -----------------------------------------------------------
// The Llama layout with LayerNorms (weight and bias), q/k/v biases under use_qkv_bias, partial
// rotary, optional parallel residual (one norm) and per-head q/k LayerNorms without bias.
Decoder ReadStablelm(ConfigReader& config) {
  Decoder d;
  d.vocab = config.Positive({"vocab_size"}, kMaxVocab);
  d.hidden = config.Positive({"hidden_size"}, kMaxWidth);
  d.layers = config.Positive({"num_hidden_layers"}, kMaxLayers);
  d.heads = config.Positive({"num_attention_heads"}, kMaxHeads);
  d.kv_heads = config.Positive({"num_key_value_heads"}, kMaxHeads, d.heads,
                               "num_key_value_heads absent: one KV head per query head (MHA)");
  CheckKvHeads(config, d.heads, d.kv_heads);
  d.head_dim = SplitHeads(config, d.hidden, d.heads);
  d.inner = config.Positive({"intermediate_size"}, kMaxWidth);
  d.activation = config.String({"hidden_act"}, "silu");
  d.gated = true;
  d.qkv_bias = config.Flag({"use_qkv_bias"}, false);
  d.out_bias = d.mlp_bias = false;
  const bool parallel = config.Flag({"use_parallel_residual"}, false);
  d.layout = parallel ? BlockLayout::kParallel : BlockLayout::kPreNorm;
  d.tied = config.Flag({"tie_word_embeddings"}, false);
  const nlohmann::json* rotary = config.Find({"partial_rotary_factor"});
  const double fraction = rotary && rotary->is_number() ? rotary->get<double>() : 0.25;
  d.attention_label = ", rotary on " + Percent(fraction) + " of each head";
  if (config.Flag({"qk_layernorm"}, false)) {
    // StableLmLayerNormPerHead: one bias-free LayerNorm(head_dim) per head, "norms.{h}".
    TensorSpec q = Spec("q_layernorm.norms.{e}.weight", {d.head_dim});
    q.copies = d.heads;
    TensorSpec k = Spec("k_layernorm.norms.{e}.weight", {d.head_dim});
    k.copies = d.kv_heads;
    d.attention_extra.push_back(std::move(q));
    d.attention_extra.push_back(std::move(k));
    d.qk_norm_width = (d.heads + d.kv_heads) * d.head_dim;
  }
  d.family = std::string("StableLM decoder: LayerNorm, ") + (d.qkv_bias ? "q/k/v biases, " : "") +
             "partial rotary, " + ActivationLabel(true, d.activation) + " MLP" +
             (parallel ? ", parallel residual" : "") +
             (d.qk_norm_width ? ", per-head q/k LayerNorm" : "");
  return d;
}

}  // namespace hubwatch::classic

#!/usr/bin/env python3
"""Measures peak GPU memory of training and generation steps, one JSON line per case.

usage: tests/calibration/measure.py --out FILE.jsonl [--budget-s 360] [--only SUBSTRING]
       tests/calibration/measure.py --dry-run [--out FILE.jsonl]

Models are built from the released configs in tests/fixtures/models with random weights directly
on the GPU in bf16 (transformers' from_config: nothing is downloaded); each case runs in a fresh
process so one that runs out of memory is recorded as such and leaves the next a clean card.
Every line has the format of tests/fixtures/calibration/measured-memory.jsonl (the `norm`
vocabulary of measured-memory.md), with three measurements: torch's peak allocated and peak
reserved bytes over the measured steps, and the CUDA context (torch.cuda.mem_get_info before the
first tensor). `hubwatch calibrate --measurements FILE.jsonl --configs tests/fixtures/models`
then compares them with the estimates.

--dry-run builds every case's record without a GPU or torch (values: a placeholder 1 GiB) and
checks it against the vocabulary; with --out it writes them, and the CI test
(tests/calibration/check_measure.sh) has `hubwatch calibrate` estimate every one: the logic that
needs no GPU.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")
GIB = 1024 ** 3

# The norm keys every record carries (measured-memory.md, "Normalized settings"); this script
# adds "oom" (the case ran out of memory: no value, the fit verdict is checked instead).
NORM_KEYS = [
    "mode", "model", "batch_size", "grad_accum", "seq_len", "prompt_tokens", "generated_tokens",
    "data_dependent_length", "packing", "weights_dtype", "quantization", "trainable_dtype",
    "master_weights_fp32", "optimizer", "optimizer_state_dtype", "optimizer_in_backward",
    "gradient_checkpointing", "activation_offload", "cpu_offload", "loss", "compile", "attention",
    "lora_r", "lora_alpha", "lora_targets", "parallelism", "num_gpus", "metric",
    "includes_cuda_context", "per", "value_gib", "gpu", "inferred",
]

# config x mode x batch x sequence, sized to about 6 minutes on one H100 (small models first, so a
# cut-short run still has most cases).
MATRIX = [
    ("Qwen/Qwen2.5-0.5B-Instruct", "full", 4, 1024, "none"),
    ("Qwen/Qwen2.5-0.5B-Instruct", "full", 8, 2048, "full"),
    ("Qwen/Qwen2.5-0.5B-Instruct", "lora", 4, 2048, "none"),
    ("Qwen/Qwen2.5-0.5B-Instruct", "inference", 1, (4096, 512), None),
    ("Qwen/Qwen3-0.6B", "full", 4, 2048, "none"),
    ("Qwen/Qwen3-0.6B", "lora", 8, 2048, "full"),
    ("HuggingFaceTB/SmolLM3-3B", "lora", 2, 2048, "full"),
    ("meta-llama/Llama-3.2-3B", "full", 2, 1024, "full"),
    ("meta-llama/Llama-3.2-3B", "lora", 4, 1024, "none"),
    ("meta-llama/Llama-3.2-3B", "inference", 1, (8192, 512), None),
    ("mistralai/Mistral-7B-v0.1", "lora", 2, 2048, "full"),
    ("mistralai/Mistral-7B-v0.1", "inference", 4, (2048, 256), None),
    ("google/gemma-2-2b", "lora", 2, 2048, "full"),
]


def config_path(model):
    return os.path.join(MODELS, model.replace("/", "__", 1) + ".config.json")


def record(case, gpu, values):
    """The JSONL record of one case: `values` holds allocated/reserved/context in bytes, or oom."""
    model, mode, batch, length, checkpointing = case
    inference = mode == "inference"
    norm = {k: None for k in NORM_KEYS}
    norm.update({
        "mode": mode, "model": model, "batch_size": batch, "grad_accum": 1,
        "seq_len": None if inference else length,
        "prompt_tokens": length[0] if inference else None,
        "generated_tokens": length[1] if inference else None,
        "data_dependent_length": False, "packing": None if inference else False,
        "weights_dtype": "bf16", "quantization": None,
        "trainable_dtype": None if inference else ("bf16" if mode == "full" else "fp32"),
        "master_weights_fp32": None if inference else False,
        "optimizer": "none" if inference else "adamw",
        "optimizer_state_dtype": None if inference else ("bf16" if mode == "full" else "fp32"),
        "optimizer_in_backward": None if inference else False,
        "gradient_checkpointing": None if inference else checkpointing,
        "activation_offload": None if inference else False, "cpu_offload": "none",
        "loss": None if inference else "standard", "compile": False, "attention": "sdpa",
        "lora_r": 16 if mode == "lora" else None, "lora_alpha": 32 if mode == "lora" else None,
        "lora_targets": "all_linear" if mode == "lora" else None,
        "parallelism": "single", "num_gpus": 1, "metric": "allocated",
        "includes_cuda_context": False, "per": "gpu", "gpu": gpu, "inferred": [],
        "oom": bool(values.get("oom")),
    })
    base = f"hubwatch-measure-{model.split('/')[1]}-{mode}-b{batch}-" + (
        f"p{length[0]}g{length[1]}" if inference else f"s{length}-{checkpointing}")
    out = []
    for metric in ("allocated", "reserved"):
        n = dict(norm, metric=metric)
        value = values.get(metric)
        n["value_gib"] = round(value / GIB, 3) if value is not None else None
        out.append({
            "id": f"{base}-{metric}", "source": "hubwatch-measure", "model": model, "mode": mode,
            "measured_or_estimated": "measured",
            "cuda_context_gib": round(values["context"] / GIB, 3) if "context" in values else None,
            "value": value, "unit": "bytes", "norm": n,
        })
    return out


def check(rec):
    norm = rec["norm"]
    missing = [k for k in NORM_KEYS if k not in norm]
    if missing:
        raise SystemExit(f"{rec['id']}: norm lacks {missing}")
    if not os.path.exists(config_path(rec["model"])):
        raise SystemExit(f"{rec['id']}: no config {config_path(rec['model'])}")


def run_case(case):
    """In a child process: builds the model on the GPU and measures; prints one JSON object."""
    import torch  # noqa: only on the GPU machine
    import transformers
    model_id, mode, batch, length, checkpointing = case
    free, total = torch.cuda.mem_get_info()  # initialises the context, before any tensor
    context = total - free
    config = transformers.AutoConfig.from_pretrained(config_path(model_id))
    config.use_cache = mode == "inference"
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(
            config, torch_dtype=torch.bfloat16, attn_implementation="sdpa")
    vocab = config.vocab_size
    try:
        torch.cuda.reset_peak_memory_stats()
        if mode == "inference":
            prompt, new = length
            ids = torch.randint(0, vocab, (batch, prompt), device="cuda")
            model.eval()
            with torch.no_grad():
                model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False)
        else:
            if mode == "lora":
                import peft
                model = peft.get_peft_model(model, peft.LoraConfig(
                    r=16, lora_alpha=32, target_modules="all-linear"))
                for p in model.parameters():
                    if p.requires_grad:
                        p.data = p.data.float()
            if checkpointing == "full":
                model.gradient_checkpointing_enable(
                    gradient_checkpointing_kwargs={"use_reentrant": False})
                if mode == "lora":
                    model.enable_input_require_grads()
            model.train()
            params = [p for p in model.parameters() if p.requires_grad]
            optimizer = torch.optim.AdamW(params, lr=1e-5)
            ids = torch.randint(0, vocab, (batch, length), device="cuda")
            for _ in range(2):  # the first step creates the optimizer's states
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        values = {"allocated": torch.cuda.max_memory_allocated(),
                  "reserved": torch.cuda.max_memory_reserved(), "context": context}
    except torch.cuda.OutOfMemoryError:
        values = {"oom": True, "context": context}
    print(json.dumps(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--budget-s", type=float, default=360)
    ap.add_argument("--only", default="")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--case", type=int, help=argparse.SUPPRESS)  # the child's entry point
    args = ap.parse_args()
    cases = [c for c in MATRIX if args.only in c[0]]
    if args.case is not None:
        return run_case(MATRIX[args.case])
    if args.dry_run:  # placeholder values (1 GiB), so the records can be estimated
        records = []
        for case in cases:
            fake = {"allocated": GIB, "reserved": GIB, "context": GIB}
            for rec in record(case, "H100-80GB", fake):
                check(rec)
                records.append(rec)
        if args.out:
            with open(args.out, "w") as out:
                out.writelines(json.dumps(r) + "\n" for r in records)
        print(f"measure: {len(cases)} cases, {len(records)} records, every norm complete")
        return
    if not args.out:
        ap.error("--out FILE.jsonl (or --dry-run)")
    name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip().splitlines()[0]
    # The vocabulary's short names ("NVIDIA H100 80GB HBM3" -> "H100-80GB").
    gpu = "H100-80GB" if "H100" in name else "H200" if "H200" in name else name
    start = time.monotonic()
    with open(args.out, "a") as out:
        for case in cases:
            if time.monotonic() - start > args.budget_s:
                print(f"measure: budget spent, {case} not run", file=sys.stderr)
                continue
            child = subprocess.run([sys.executable, __file__, "--case", str(MATRIX.index(case))],
                                   capture_output=True, text=True)
            if child.returncode != 0:
                tail = child.stderr.strip().splitlines()[-1:] or ["?"]
                values = {"oom": "OutOfMemory" in child.stderr, "error": tail[0]}
            else:
                values = json.loads(child.stdout.strip().splitlines()[-1])
            for rec in record(case, gpu, values):
                out.write(json.dumps(rec) + "\n")
            out.flush()
            print(f"measure: {case}: {values}", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The pages in a real browser: headless Chromium (Debian's `chromium`, installed by .ci/setup)
# opens the index (/, a family's page, a search), the gemma-2-9b-it page, the pages of an encoder,
# a multimodal model and a checkpoint without a config.json, /changes, /plan and /calibration, and
# submits the /plan form; the rendered
# DOMs (--dump-dom) are checked, html-validate (pinned in tests/browser/js) validates every page,
# and a full-page screenshot of the gemma-2-9b-it page is saved.
#
# usage: tests/browser/browser_test.sh BUILD_DIR [SCREENSHOT.png]
# Exit 0: passed; 77: skipped (no chromium or no html-validate; ctest reports SKIP); else failed.
set -euo pipefail
build=${1:?usage: browser_test.sh BUILD_DIR [SCREENSHOT.png]}
here="$(cd "$(dirname "$0")" && pwd)"
shot=${2:-}
chrome=$(command -v chromium || command -v chromium-browser || true)
validator="$here/js/node_modules/.bin/html-validate"
[ -n "$chrome" ] || { echo "SKIP: chromium is not installed (.ci/setup installs it)"; exit 77; }
[ -x "$validator" ] || { echo "SKIP: html-validate is not installed (.ci/setup: npm ci in $here/js)"; exit 77; }

work=$(mktemp -d)
"$build/bin/page_server" >"$work/server.out" 2>"$work/server.err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do grep -q '^base ' "$work/server.out" && break; sleep 0.1; done
base=$(awk '$1 == "base" {print $2}' "$work/server.out")
[ -n "$base" ] || { echo "page_server did not start"; cat "$work/server.err"; exit 1; }

fail=0
check() {  # check FILE NEEDLE...: every needle in the file
  local file=$1; shift
  for needle in "$@"; do
    grep -qF -- "$needle" "$file" || { echo "FAIL: $(basename "$file") lacks: $needle"; fail=1; }
  done
}

# The /plan form filled and submitted by the browser: a page of ours that fills the served
# form's fields (same names) and submits it to /plan.
config='{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}'
cat >"$work/submit.html" <<HTML
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>submit</title></head><body>
<form id="f" method="post" action="$base/plan"><textarea name="config">$config</textarea>
<input name="seq" value="1024"><input name="batch" value=""><input name="lora_rank" value="8">
<input name="cards" value="h100,a100-80gb"></form>
<script>document.getElementById('f').submit();</script></body></html>
HTML

# One Chromium per page, in parallel (each start is the slow part).
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
       --disable-extensions --virtual-time-budget=5000)
declare -A urls=([index]="$base/?family=gemma2" [landing]="$base/" [search]="$base/?name=gemma&state=ok"
                 [model]="$base/models/google/gemma-2-9b-it"
                 [changes]="$base/changes" [plan]="$base/plan"
                 [hostile]="$base/models/hostile-org/payload-model" [submitted]="file://$work/submit.html"
                 [encoder]="$base/models/sentence-transformers/all-MiniLM-L6-v2"
                 [multimodal]="$base/models/edbeeching/vsft-llava-1.5-7b-hf"
                 [weights]="$base/models/fixture-org/weights-without-config"
                 [calibration]="$base/calibration")
pids=()
for name in "${!urls[@]}"; do
  "$chrome" "${flags[@]}" --user-data-dir="$work/profile-$name" --dump-dom "${urls[$name]}" \
    >"$work/$name.dom" 2>"$work/$name.err" &
  pids+=($!)
done
if [ -n "$shot" ]; then
  "$chrome" "${flags[@]}" --user-data-dir="$work/profile-shot" --hide-scrollbars \
    --window-size=1280,5200 --screenshot="$shot" "$base/models/google/gemma-2-9b-it" \
    >/dev/null 2>"$work/shot.err" &
  pids+=($!)
fi
for pid in "${pids[@]}"; do wait "$pid" || { echo "FAIL: a chromium run failed"; fail=1; }; done

check "$work/index.dom" '<h1>Tracked models' 'href="/models/google/gemma-2-9b-it"' '>gemma2</h2>'
check "$work/landing.dom" '<h1>Tracked models' '<a href="/?family=gemma2">gemma2</a>' \
  '<form method="get" action="/" class="filters">' 'Changed since'
check "$work/search.dom" '>Models matching name gemma, state ok</h2>' \
  'href="/models/google/gemma-2-9b-it"'
check "$work/model.dom" '<h1>gemma-2-9b-it: GPU memory to fine-tune</h1>' '9,241,705,984' \
  '18.5 GB' '1.41 GB' '8,192 × 3,584' 'What changed upstream' 'Do this to your own model' \
  '<figure class="chart">' 'Where the memory goes, per mode' '>optimizer state</text>'
check "$work/changes.dom" '<h1>Tracked changes</h1>' 'chip'
check "$work/plan.dom" '<textarea id="config" name="config"'
check "$work/submitted.dom" 'Your model: GPU memory to fine-tune' '8,030,261,248' 'LoRA r=8'
check "$work/hostile.dom" '&lt;script&gt;alert(1)&lt;/script&gt;'
check "$work/encoder.dom" '22,713,216 parameters, bert' 'keeps no KV cache' 'reads its input in one pass'
check "$work/multimodal.dom" '7,063,427,072 parameters, llava' 'Parts, each counted on its own'
check "$work/weights.dom" "From the checkpoint's tensors: structure not modelled." \
  '124,439,808 parameters counted exactly'
check "$work/calibration.dom" '<h1>Memory estimates against measured runs</h1>' \
  '<circle class="dot"' 'qwen25-speed-benchmark-108' 'Runs not estimated, and why'
python3 "$here/check_dom.py" "$work"/*.dom || fail=1
[ -s "$work/submitted.dom" ] || { echo "FAIL: the form post rendered nothing"; fail=1; }

# html-validate on what the server sends (not the browser's DOM).
for path in / "/?family=gemma2" "/?name=gemma&changed_since=2024-01-01" \
            /models/google/gemma-2-9b-it /models/hostile-org/payload-model /changes /plan \
            "/models/mistralai/Mistral-7B-Instruct-v0.3" /models/sentence-transformers/all-MiniLM-L6-v2 \
            /models/edbeeching/vsft-llava-1.5-7b-hf /models/fixture-org/weights-without-config \
            /calibration; do
  out="$work/validate$(echo "$path" | tr '/?&=' '____').html"
  curl -sf "$base$path" -o "$out" || { echo "FAIL: GET $path"; fail=1; continue; }
done
curl -s -X POST "$base/plan" --data-urlencode 'config={"model_type": "nope"}' \
  -o "$work/validate_plan_error.html"
"$validator" --config "$here/htmlvalidate.json" "$work"/validate*.html || fail=1
if [ -n "$shot" ] && [ ! -s "$shot" ]; then echo "FAIL: no screenshot"; fail=1; fi
[ $fail -eq 0 ] && echo "browser tests passed"
exit $fail

// Cross-check with a client we did not write: @huggingface/hub against fakehub.
// usage: node crosscheck.mjs http://127.0.0.1:PORT TOKEN
// Exits non-zero, naming the check, when the official client cannot read our Hub correctly.
import assert from "node:assert/strict";
import {
  listCommits,
  listFiles,
  modelInfo,
  downloadFile,
  parseSafetensorsMetadata,
} from "@huggingface/hub";

const [hubUrl, accessToken] = process.argv.slice(2);
if (!hubUrl || !accessToken) {
  console.error("usage: node crosscheck.mjs HUB_URL TOKEN");
  process.exit(2);
}

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

await check("listCommits pages through Link rel=next (F1, batch of 2)", async () => {
  const commits = [];
  for await (const c of listCommits({ repo: "meta-llama/Meta-Llama-3-8B-Instruct", hubUrl, batchSize: 2 })) {
    commits.push(c);
  }
  assert.equal(commits.length, 5);
  assert.equal(commits[0].oid, "a8977699a3d0820e80129fb3c93c20fbd9972c41");
  assert.equal(commits[1].oid, "4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf");
  assert.equal(commits[4].title, "initial commit");
  assert.equal(commits[4].authors[0].username, "system");
  assert.ok(commits[0].date instanceof Date && !isNaN(commits[0].date));
  assert.ok(commits[0].date > commits[1].date, "newest first");
});

await check("listFiles recursive shows LFS identity (gemma-2-9b-it)", async () => {
  const files = [];
  for await (const f of listFiles({ repo: "google/gemma-2-9b-it", recursive: true, hubUrl, accessToken })) {
    files.push(f);
  }
  const shards = files.filter((f) => f.path.endsWith(".safetensors"));
  assert.equal(shards.length, 4);
  for (const s of shards) {
    assert.equal(s.type, "file");
    assert.match(s.lfs.oid, /^[0-9a-f]{64}$/);
    assert.equal(s.lfs.size, s.size);
  }
  const config = files.find((f) => f.path === "config.json");
  assert.match(config.oid, /^[0-9a-f]{40}$/);
  assert.equal(config.lfs, undefined);
});

await check("listFiles with expand has lastCommit (F4)", async () => {
  const files = [];
  for await (const f of listFiles({ repo: "mistralai/Mistral-7B-Instruct-v0.3", expand: true, hubUrl, accessToken })) {
    files.push(f);
  }
  const tok = files.find((f) => f.path === "tokenizer_config.json");
  assert.equal(tok.lastCommit.title, "Fix chat template when tool_calls is defined but None (#70)");
});

await check("modelInfo reads gated, updatedAt and safetensors (gemma-2-9b-it)", async () => {
  const info = await modelInfo({ name: "google/gemma-2-9b-it", hubUrl, additionalFields: ["safetensors", "sha"] });
  assert.equal(info.name, "google/gemma-2-9b-it");
  assert.equal(info.gated, "manual");
  assert.equal(info.private, false);
  assert.equal(info.task, "text-generation");
  assert.ok(info.updatedAt instanceof Date && !isNaN(info.updatedAt));
  assert.equal(info.safetensors.total, 9241705984);
  assert.match(info.sha, /^[0-9a-f]{40}$/);
});

await check("downloadFile follows resolve -> resolve-cache (F7 tokenizer_config)", async () => {
  const blob = await downloadFile({ repo: "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", path: "tokenizer_config.json", hubUrl });
  assert.ok(blob, "file exists");
  const config = JSON.parse(await blob.text());
  assert.ok(config.chat_template.endsWith("{{'<｜Assistant｜><think>\\n'}}{% endif %}"));
});

await check("downloadFile of a missing file is null", async () => {
  const blob = await downloadFile({ repo: "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", path: "nope.json", hubUrl });
  assert.equal(blob, null);
});

await check("downloadFile of an LFS file goes through the CDN (F4 tokenizer.model)", async () => {
  const blob = await downloadFile({ repo: "mistralai/Mistral-7B-Instruct-v0.3", path: "tokenizer.model", hubUrl, accessToken });
  assert.equal(blob.size, 587404);
  const head = new Uint8Array(await blob.slice(0, 16).arrayBuffer());
  assert.equal(head.length, 16);
});

await check("parseSafetensorsMetadata reads all 4 gemma-2 shard headers", async () => {
  const meta = await parseSafetensorsMetadata({ repo: "google/gemma-2-9b-it", hubUrl, accessToken, computeParametersCount: true });
  assert.equal(meta.sharded, true);
  assert.equal(Object.keys(meta.headers).length, 4);
  let tensors = 0;
  for (const header of Object.values(meta.headers)) {
    tensors += Object.keys(header).filter((k) => k !== "__metadata__").length;
  }
  assert.equal(tensors, 464);
  const shard1 = meta.headers["model-00001-of-00004.safetensors"];
  assert.deepEqual(shard1["model.embed_tokens.weight"].shape, [256000, 3584]);
  assert.equal(meta.parameterCount.BF16, 9241705984);
  assert.equal(meta.index.metadata.total_size, 18483411968);
});

await check("parseSafetensorsMetadata on a gated repo without a token fails", async () => {
  await assert.rejects(parseSafetensorsMetadata({ repo: "google/gemma-2-9b-it", hubUrl }));
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

// Cross-check with a client we did not write: @huggingface/hub against fakehub.
// usage: node crosscheck.mjs http://127.0.0.1:PORT TOKEN
// Exits non-zero, naming the check, when the official client cannot read our Hub correctly.
import assert from "node:assert/strict";
import {
  listCommits,
  listFiles,
  listModels,
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

// A fetch for the client's `fetch` option that records every URL it asks for, and the Link
// header of every answer. `rewrite` may change a URL before it is sent.
function recordingFetch(rewrite = (url) => url) {
  const log = { urls: [], links: [], bodies: [] };
  log.fetch = async (url, init) => {
    const sent = rewrite(String(url), log.urls.length);
    log.urls.push(sent);
    const res = await fetch(sent, init);
    log.links.push(res.headers.get("Link"));
    if (res.ok) log.bodies.push(await res.clone().json());
    return res;
  };
  return log;
}
// The next URL of a Link header, as the client reads it (absolute URLs only).
function nextOf(link) {
  return link ? /<(https?:[/][/][^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}
// Reads a listing with plain fetch, following Link rel="next" verbatim; returns items and URLs.
async function fetchAllPages(url) {
  const items = [];
  const urls = [];
  while (url) {
    urls.push(url);
    const res = await fetch(url, { headers: { accept: "application/json" } });
    assert.equal(res.status, 200, url);
    items.push(...(await res.json()));
    url = nextOf(res.headers.get("Link"));
  }
  return { items, urls };
}
async function allModels(params) {
  const models = [];
  for await (const m of listModels({ hubUrl, ...params })) models.push(m);
  return models;
}
function assertNewestFirst(models) {
  for (let i = 1; i < models.length; i++) {
    assert.ok(Date.parse(models[i - 1].lastModified) >= Date.parse(models[i].lastModified),
      `newest first: ${models[i - 1].name ?? models[i - 1].id} before ${models[i].name ?? models[i].id}`);
  }
}
// The change hint (hf-hub-api.md section 11): the listing, newest first, with sha and lastModified.
const HINT = { sort: "lastModified", additionalFields: ["sha", "lastModified"] };
const GOOGLE = [
  ["google/gemma-2-9b-it", "db7ad7bb6ab8bb3af639882f5d3cf510333ca2d4", "2024-06-27T14:09:23.000Z"],
  ["google/gemma-7b-it", "fba36843f25f152ca3702a8bd6f34974f5b796d1", "2024-04-05T10:27:45.000Z"],
];

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

await check("listModels sends author, sort, expand=, limit and no direction", async () => {
  const rec = recordingFetch();
  const models = await allModels({ search: { owner: "google" }, ...HINT, limit: 2, fetch: rec.fetch });
  assert.equal(models.length, 2);
  assert.equal(rec.urls.length, 1, "limit 2 is met by the first page");
  console.log(`     listModels requested ${rec.urls[0]}`);
  const url = new URL(rec.urls[0]);
  assert.equal(url.pathname, "/api/models");
  const q = url.searchParams;
  assert.equal(q.get("author"), "google");
  assert.equal(q.get("sort"), "lastModified");
  assert.equal(q.get("limit"), "2");
  assert.equal(q.has("direction"), false);
  assert.equal(q.has("expand[]"), false, "the client repeats expand=, not expand[]=");
  for (const key of ["sha", "lastModified", "pipeline_tag", "private", "gated", "downloads", "likes"]) {
    assert.ok(q.getAll("expand").includes(key), `expand=${key}`);
  }
});

await check("listModels by owner, sort=lastModified: newest first with sha and lastModified", async () => {
  const models = await allModels({ search: { owner: "google" }, ...HINT });
  assert.deepEqual(models.map((m) => [m.name, m.sha, m.lastModified]), GOOGLE);
  for (const m of models) {
    assert.ok(m.updatedAt instanceof Date && m.updatedAt.toISOString() === m.lastModified);
    assert.equal(m.private, false);
  }
  assertNewestFirst(models);
});

await check("listModels sha is the head of main that listCommits reads", async () => {
  for (const m of await allModels({ ...HINT })) {
    assert.match(m.sha, /^[0-9a-f]{40}$/, m.name);
    assert.ok(!isNaN(Date.parse(m.lastModified)), m.name);
    for await (const c of listCommits({ repo: m.name, revision: "main", batchSize: 1, hubUrl, accessToken })) {
      assert.equal(c.oid, m.sha, m.name);
      break;
    }
  }
});

await check("listModels Hub-wide feed (no owner) is newest first", async () => {
  const models = await allModels({ ...HINT });
  assert.ok(models.length >= 3, "the fixtures have several owners");
  assert.ok(new Set(models.map((m) => m.name.split("/")[0])).size >= 3);
  assertNewestFirst(models);
});

await check("listModels follows Link rel=next verbatim (pages of 2)", async () => {
  // The client has no page size apart from limit, which also caps the total: ask for pages of 2
  // by rewriting its first URL only; every later URL must be the previous answer's Link.
  const whole = await allModels({ ...HINT });
  const rec = recordingFetch((url, i) => (i === 0 ? url.replace("limit=500", "limit=2") : url));
  const paged = await allModels({ ...HINT, fetch: rec.fetch });
  assert.equal(rec.urls.length, Math.ceil(whole.length / 2));
  for (let i = 1; i < rec.urls.length; i++) assert.equal(rec.urls[i], nextOf(rec.links[i - 1]));
  assert.equal(rec.links.at(-1), null, "the last page has no Link");
  assert.deepEqual(paged.map((m) => [m.name, m.sha]), whole.map((m) => [m.name, m.sha]));
});

await check("listing as hubwatch asks it (expand[]=, limit=1, Link) matches listModels", async () => {
  const { items, urls } = await fetchAllPages(
    `${hubUrl}/api/models?sort=lastModified&author=google&expand[]=sha&expand[]=lastModified&limit=1`);
  assert.equal(urls.length, GOOGLE.length);
  for (const next of urls.slice(1)) {
    const q = new URL(next).searchParams;
    assert.equal(q.get("sort"), "lastModified", next);
    assert.equal(q.get("author"), "google", next);
    assert.equal(q.get("limit"), "1", next);
    const expand = [...q.getAll("expand"), ...q.getAll("expand[]")];
    assert.deepEqual(expand.sort(), ["lastModified", "sha"], next);
  }
  assert.deepEqual(items.map((m) => [m.id, m.sha, m.lastModified]), GOOGLE);
});

// The next four describe the Hub's listing beyond what fakehub answered before the change hints
// (hf-hub-api.md section 11): expand trims the items, unknown expand or sort is a 400, the
// cursor in Link is opaque.
await check("listing with expand returns only the asked properties and id", async () => {
  const res = await fetch(`${hubUrl}/api/models?sort=lastModified&expand[]=sha&expand[]=lastModified&limit=3`);
  assert.equal(res.status, 200);
  for (const item of await res.json()) {
    assert.deepEqual(Object.keys(item).filter((k) => k !== "_id").sort(), ["id", "lastModified", "sha"]);
  }
  const rec = recordingFetch();
  await allModels({ ...HINT, limit: 3, fetch: rec.fetch });
  const asked = ["_id", "id", "pipeline_tag", "private", "gated", "downloads", "likes", "lastModified", "sha"];
  for (const item of rec.bodies[0]) {
    const extra = Object.keys(item).filter((k) => !asked.includes(k));
    assert.deepEqual(extra, [], `${item.id}: not asked for`);
  }
});

await check("listModels with an unknown expand fails with 400", async () => {
  await assert.rejects(allModels({ sort: "lastModified", additionalFields: ["noSuchField"] }),
    (e) => e.statusCode === 400);
  const res = await fetch(`${hubUrl}/api/models?expand[]=noSuchField`);
  assert.equal(res.status, 400);
});

await check("listModels with an unknown sort fails with 400", async () => {
  await assert.rejects(allModels({ sort: "noSuchKey", additionalFields: ["sha"] }), (e) => e.statusCode === 400);
});

await check("listing cursor in Link is opaque (not a plain offset)", async () => {
  const res = await fetch(`${hubUrl}/api/models?sort=lastModified&expand[]=sha&expand[]=lastModified&limit=2`);
  const next = nextOf(res.headers.get("Link"));
  assert.ok(next, "a next page");
  const cursor = new URL(next).searchParams.get("cursor");
  assert.ok(cursor, "a cursor parameter");
  assert.doesNotMatch(cursor, /^\d+$/);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

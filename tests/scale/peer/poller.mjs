// The peer: a head-change poller on the official @huggingface/hub client, for tests/scale/compare.sh.
//
// usage: HF_ENDPOINT=http://127.0.0.1:PORT node poller.mjs [--mode poll|listing] REPOS CONCURRENCY CYCLES
//        (or PEER_MODE=poll|listing; the flag wins; poll is the default)
//
// Tracks synthetic/model-00000 .. REPOS-1 (fakehub --synthetic; PEER_IDS names others), branch main. A cycle asks every
// repo for its head with the library's own call for it, listCommits({revision: "main",
// batchSize: 1}) (one GET /api/models/{id}/commits/main?limit=1; the library has no refs call),
// CONCURRENCY repos at a time (the same cap as hubwatch's poll.max_concurrent), and compares it
// with the head it saw last: that is "the head moved". Node's fetch keeps connections alive.
// Before every cycle after the first it prints {"waiting": n} and reads one line from stdin, so a
// driver can take its measurements between cycles. After each cycle it prints one JSON line:
// wall seconds, CPU seconds (utime + stime from /proc/self/stat), VmHWM, heads changed.
//
// --mode listing (the change hint, hf-hub-api.md section 11): each cycle first reads the Hub-wide
// model listing with the library's listModels({sort: "lastModified", additionalFields: ["sha",
// "lastModified"]}) (GET /api/models?limit=500&sort=lastModified&expand=...; newest first; the
// library follows Link rel="next" verbatim), stopping at the first item older than the previous
// watermark minus PEER_OVERLAP_S (default 60) seconds; the watermark is the newest lastModified
// listed. It then polls, as above, only the tracked repos whose listed sha differs from the head
// it saw last (each repo once, at its newest listing), and those whose poll failed the cycle
// before. Cycle 1 knows no head: it reads one item (limit 1) for the watermark and polls every
// repo. When the listing fails, the cycle polls every repo and keeps the watermark. Its line
// adds: mode, listing_requests, listed (items read), polled (repos polled).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { listCommits, listModels } from "@huggingface/hub";

const usage = "usage: HF_ENDPOINT=URL node poller.mjs [--mode poll|listing] REPOS CONCURRENCY CYCLES";
let args;
try {
  args = parseArgs({ allowPositionals: true, options: { mode: { type: "string" } } });
} catch (e) {
  console.error(`${e.message}\n${usage}`);
  process.exit(2);
}
const mode = args.values.mode ?? process.env.PEER_MODE ?? "poll";
const [repos, concurrency, cycles] = args.positionals.map(Number);
const hubUrl = process.env.HF_ENDPOINT;
const overlapMs = Number(process.env.PEER_OVERLAP_S ?? 60) * 1000;
if (!hubUrl || args.positionals.length !== 3 || !(repos > 0) || !(concurrency > 0) || !(cycles > 0) ||
    !["poll", "listing"].includes(mode) || !(overlapMs >= 0)) {
  console.error(usage);
  process.exit(2);
}
// PEER_IDS: a file of repo ids, one a line (fakehub --owners names them owner-NNNN/model-NNNNN);
// else synthetic/model-00000 ...
const ids = process.env.PEER_IDS
  ? readFileSync(process.env.PEER_IDS, "utf8").split(/\s+/).filter(Boolean).slice(0, repos)
  : Array.from({ length: repos }, (_, r) => `synthetic/model-${String(r).padStart(5, "0")}`);
const tracked = new Set(ids);
const heads = new Map();
let watermark;            // ms since the epoch: the newest lastModified listed so far
let listingRequests = 0;  // requests of the current cycle's listing
let retry = [];           // hinted repos whose poll failed: polled again next cycle
const countingFetch = (url, init) => {
  listingRequests++;
  return fetch(url, init);
};

async function head(name) {
  for await (const commit of listCommits({ repo: { type: "model", name }, revision: "main", batchSize: 1, hubUrl })) {
    return commit.oid;
  }
  throw new Error(`${name}: no commits`);
}

function cpuSeconds() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;  // utime, stime; CLK_TCK is 100 here
}
function hwmKiB() {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]);
}

async function cycle(names = ids) {
  let next = 0, changed = 0, errors = 0;
  const failed = [];
  async function worker() {
    while (next < names.length) {
      const name = names[next++];
      try {
        const oid = await head(name);
        if (heads.has(name) && heads.get(name) !== oid) changed++;
        heads.set(name, oid);
      } catch (e) {
        errors++;
        failed.push(name);
        if (errors <= 3) console.error(`${name}: ${e.message}`);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { changed, errors, failed };
}

// The listing mode's cycle: the hint, then the polls it asks for.
async function listingCycle() {
  listingRequests = 0;
  const hinted = [];
  const listedNames = new Set();
  let listed = 0, newest = watermark ?? -Infinity, listingErrors = 0, names;
  try {
    const params = { sort: "lastModified", additionalFields: ["sha", "lastModified"], hubUrl, fetch: countingFetch };
    if (watermark === undefined) params.limit = 1;
    for await (const m of listModels(params)) {
      const t = Date.parse(m.lastModified);
      if (watermark !== undefined && !(t >= watermark - overlapMs)) break;
      listed++;
      if (t > newest) newest = t;
      if (!tracked.has(m.name) || listedNames.has(m.name)) continue;
      listedNames.add(m.name);
      if (m.sha !== heads.get(m.name)) hinted.push(m.name);
    }
    names = watermark === undefined ? ids : [...new Set([...retry, ...hinted])];
    if (newest > -Infinity) watermark = newest;
  } catch (e) {
    listingErrors++;
    console.error(`listing: ${e.message}`);
    names = ids;
  }
  const { changed, errors, failed } = await cycle(names);
  retry = failed;
  return { changed, errors: errors + listingErrors, listing_requests: listingRequests, listed, polled: names.length };
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (let c = 1; c <= cycles; c++) {
  if (c > 1) {
    console.log(JSON.stringify({ waiting: c }));
    await lines.next();
  }
  const t0 = process.hrtime.bigint(), cpu0 = cpuSeconds();
  const { changed, errors, ...listing } = mode === "listing" ? await listingCycle() : await cycle();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({
    cycle: c, repos: ids.length, wall_s: +wall.toFixed(3), cpu_s: +(cpuSeconds() - cpu0).toFixed(2),
    cpu_total_s: cpuSeconds(), vm_hwm_kib: hwmKiB(), changed, errors,
    ...(mode === "listing" ? { mode, ...listing } : {}),
  }));
}
process.exit(0);

// The peer: a head-change poller on the official @huggingface/hub client, for tests/scale/compare.sh.
//
// usage: HF_ENDPOINT=http://127.0.0.1:PORT node poller.mjs REPOS CONCURRENCY CYCLES
//
// Tracks synthetic/model-00000 .. REPOS-1 (fakehub --synthetic), branch main. A cycle asks every
// repo for its head with the library's own call for it, listCommits({revision: "main",
// batchSize: 1}) (one GET /api/models/{id}/commits/main?limit=1; the library has no refs call),
// CONCURRENCY repos at a time (the same cap as hubwatch's poll.max_concurrent), and compares it
// with the head it saw last: that is "the head moved". Node's fetch keeps connections alive.
// Before every cycle after the first it prints {"waiting": n} and reads one line from stdin, so a
// driver can take its measurements between cycles. After each cycle it prints one JSON line:
// wall seconds, CPU seconds (utime + stime from /proc/self/stat), VmHWM, heads changed.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { listCommits } from "@huggingface/hub";

const [repos, concurrency, cycles] = process.argv.slice(2).map(Number);
const hubUrl = process.env.HF_ENDPOINT;
if (!hubUrl || !(repos > 0) || !(concurrency > 0) || !(cycles > 0)) {
  console.error("usage: HF_ENDPOINT=URL node poller.mjs REPOS CONCURRENCY CYCLES");
  process.exit(2);
}
const ids = Array.from({ length: repos }, (_, r) => `synthetic/model-${String(r).padStart(5, "0")}`);
const heads = new Map();

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

async function cycle() {
  let next = 0, changed = 0, errors = 0;
  async function worker() {
    while (next < ids.length) {
      const name = ids[next++];
      try {
        const oid = await head(name);
        if (heads.has(name) && heads.get(name) !== oid) changed++;
        heads.set(name, oid);
      } catch (e) {
        errors++;
        if (errors <= 3) console.error(`${name}: ${e.message}`);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { changed, errors };
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (let c = 1; c <= cycles; c++) {
  if (c > 1) {
    console.log(JSON.stringify({ waiting: c }));
    await lines.next();
  }
  const t0 = process.hrtime.bigint(), cpu0 = cpuSeconds();
  const { changed, errors } = await cycle();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({
    cycle: c, repos: ids.length, wall_s: +wall.toFixed(3), cpu_s: +(cpuSeconds() - cpu0).toFixed(2),
    cpu_total_s: cpuSeconds(), vm_hwm_kib: hwmKiB(), changed, errors,
  }));
}
process.exit(0);

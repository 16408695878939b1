// Regenerates the expected outputs of the chat-template conformance corpus with @huggingface/jinja
// (the Hub's own JavaScript implementation), so the C++ tests can demand byte equality without
// node. Run from this folder:  npm ci && npm run generate
//
//   ../corpus/expected/<template id>/<conversation>.txt    the rendered prompt, byte for byte
//   ../corpus/expected/<template id>/<conversation>.error  the error message, when rendering fails
//   ../features/expected.json                              {case name: {output} | {error}}
//
// Each corpus template is rendered on every conversation with the template's variables from
// manifest.json (bos_token, eos_token, ...) overlaid by the conversation's keys. strftime_now
// sees a fixed clock (kFixedNow, UTC) so outputs are reproducible; the C++ tests use the same.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

process.env.TZ = "UTC";
const kFixedNow = Date.UTC(2025, 2, 14, 9, 26, 53); // 2025-03-14T09:26:53Z

// Freeze the clock that strftime_now reads (it calls `new Date()` with no arguments).
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length === 0 ? [kFixedNow] : args));
  }
  static now() {
    return kFixedNow;
  }
};

const { Template } = await import("@huggingface/jinja");

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusDir = path.join(here, "..", "corpus");
const featuresDir = path.join(here, "..", "features");

function render(source, variables) {
  try {
    return { output: new Template(source).render(variables) };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
}

// --- Corpus: real templates and fixtures x canonical conversations ---
const manifest = JSON.parse(fs.readFileSync(path.join(corpusDir, "manifest.json"), "utf8"));
const conversationDir = path.join(corpusDir, "conversations");
const conversations = fs
  .readdirSync(conversationDir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => ({
    name: f.slice(0, -".json".length),
    variables: JSON.parse(fs.readFileSync(path.join(conversationDir, f), "utf8")),
  }));

const expectedDir = path.join(corpusDir, "expected");
fs.rmSync(expectedDir, { recursive: true, force: true });
let rendered = 0;
let errors = 0;
for (const entry of manifest.templates) {
  const source = fs.readFileSync(path.join(corpusDir, entry.template), "utf8");
  const outDir = path.join(expectedDir, entry.id);
  fs.mkdirSync(outDir, { recursive: true });
  for (const conversation of conversations) {
    const result = render(source, { ...entry.variables, ...conversation.variables });
    if ("output" in result) {
      fs.writeFileSync(path.join(outDir, `${conversation.name}.txt`), result.output);
      ++rendered;
    } else {
      fs.writeFileSync(path.join(outDir, `${conversation.name}.error`), result.error + "\n");
      ++errors;
    }
  }
}
console.log(
  `corpus: ${manifest.templates.length} templates x ${conversations.length} conversations: ` +
    `${rendered} rendered, ${errors} errors`,
);

// --- Feature cases: small templates exercising one construct each ---
const cases = JSON.parse(fs.readFileSync(path.join(featuresDir, "cases.json"), "utf8"));
const expected = {};
for (const c of cases.cases) {
  expected[c.name] = render(c.template, c.context ?? {});
}
fs.writeFileSync(path.join(featuresDir, "expected.json"), JSON.stringify(expected, null, 2) + "\n");
console.log(`features: ${cases.cases.length} cases`);

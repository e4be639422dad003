// The stock @huggingface/hub client (tests/interop's pinned node_modules) against three
// xetstore nodes and the load balancer in front of them. Run by tests/multinode/run:
//   node hub-multinode.mjs MANIFEST.json
// MANIFEST: {nodes: [url x3], lb: url, token, cliBucket, cliFiles: {path: sha256}, out: dir}.
// Prints one line per check, "ok NAME" or "FAIL NAME: detail"; writes OUT/uploaded.json
// ({bucket, files: {path: sha256}}) so the CLI can read what this client uploaded.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import { countingFetch, randomBytes, repetitiveBytes, sha256Hex } from "../interop/support.mjs";

const require = createRequire(new URL("../interop/package.json", import.meta.url));
const { createRepo, downloadFile, listFiles, uploadFiles } = require("@huggingface/hub");

const manifest = JSON.parse(readFileSync(process.argv[2], "utf8"));
const [node1, node2, node3] = manifest.nodes;
const accessToken = manifest.token;
const MiB = 1024 * 1024;
let failures = 0;

function check(name, ok, detail = "") {
  if (ok) {
    console.log(`ok ${name}`);
  } else {
    failures++;
    console.log(`FAIL ${name}: ${String(detail).replace(/\n/g, " ").slice(0, 1500)}`);
  }
}

async function attempt(name, fn) {
  try {
    await fn();
  } catch (err) {
    check(name, false, err?.stack ?? err);
  }
}

async function listAll(repo, hubUrl) {
  const out = new Map();
  for await (const e of listFiles({ repo, hubUrl, accessToken, recursive: true, fetch: countingFetch() })) {
    if (e.type === "file") out.set(e.path, e);
  }
  return out;
}

async function download(repo, hubUrl, p) {
  const blob = await downloadFile({ repo, path: p, hubUrl, accessToken, fetch: countingFetch() });
  if (!blob) return null;
  return new Uint8Array(await blob.arrayBuffer());
}

const bucketName = "mn/js";
const bucket = `buckets/${bucketName}`;
const sources = new Map([
  ["small/a.bin", randomBytes(200 * 1024, "mn-a")],
  ["big/random-12m.bin", randomBytes(12 * MiB, "mn-random-12m")],
  ["big/text-6m.txt", repetitiveBytes(6 * MiB)],
]);
const viaLb = new Map([["lb/b.bin", randomBytes(3 * MiB, "mn-lb-b")]]);

await attempt("create-bucket-via-node2", async () => {
  await createRepo({ repo: bucket, hubUrl: node2, accessToken, fetch: countingFetch() });
  check("create-bucket-via-node2", true);
});

await attempt("upload-via-node2", async () => {
  await uploadFiles({
    repo: bucket,
    hubUrl: node2,
    accessToken,
    files: [...sources].map(([p, bytes]) => ({ path: p, content: new Blob([bytes]) })),
    fetch: countingFetch(),
  });
  check("upload-via-node2", true);
});

await attempt("upload-via-lb", async () => {
  await uploadFiles({
    repo: bucket,
    hubUrl: manifest.lb,
    accessToken,
    files: [...viaLb].map(([p, bytes]) => ({ path: p, content: new Blob([bytes]) })),
    fetch: countingFetch(),
  });
  check("upload-via-lb", true);
});

const all = new Map([...sources, ...viaLb]);
for (const [name, url] of [["node1", node1], ["node3", node3], ["lb", manifest.lb]]) {
  await attempt(`list-via-${name}`, async () => {
    const listed = await listAll(bucket, url);
    const want = [...all.keys()].sort();
    const got = [...listed.keys()].sort();
    const sizesOk = want.every((p) => listed.get(p)?.size === all.get(p).length);
    check(`list-via-${name}`, JSON.stringify(got) === JSON.stringify(want) && sizesOk,
      `listed ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  });
  for (const [p, bytes] of all) {
    await attempt(`download-via-${name}/${p}`, async () => {
      const got = await download(bucket, url, p);
      check(`download-via-${name}/${p}`, got !== null && sha256Hex(got) === sha256Hex(bytes),
        got === null ? "not found" : `${got.length} bytes, want ${bytes.length}`);
    });
  }
}

// What the CLI uploaded through node 1, downloaded by this client through node 3 and the LB.
const cliRepo = `buckets/${manifest.cliBucket}`;
const cliFiles = Object.entries(manifest.cliFiles).sort().slice(0, 4);
for (const [name, url] of [["node3", node3], ["lb", manifest.lb]]) {
  for (const [p, sha] of cliFiles) {
    await attempt(`reads-cli-upload-via-${name}/${p}`, async () => {
      const got = await download(cliRepo, url, p);
      check(`reads-cli-upload-via-${name}/${p}`, got !== null && sha256Hex(got) === sha,
        got === null ? "not found" : `sha256 ${sha256Hex(got)}, want ${sha}`);
    });
  }
}
check("read-some-cli-files", cliFiles.length > 0, "the manifest lists no CLI files");

mkdirSync(manifest.out, { recursive: true });
writeFileSync(
  path.join(manifest.out, "uploaded.json"),
  JSON.stringify({ bucket: bucketName, files: Object.fromEntries([...all].map(([p, b]) => [p, sha256Hex(b)])) }),
);
process.exit(failures ? 1 : 0);

// Interop test: the stock @huggingface/hub npm client (pinned in package.json) against a
// freshly started `xetstore serve`. Run it through tests/interop/run, which starts the
// server and sets:
//   XETSTORE_URL        the server's base URL (the client's hubUrl)
//   XETSTORE_TOKEN      the admin token (<data-dir>/admin-token)
//   XETSTORE_BIN        the xetstore binary (for `token create`)
//   XETSTORE_DATA_DIR   the server's data directory
//   INTEROP_TRACE       optional: file that gets one line per HTTP request
//
// Every expectation is computed independently of the server: downloaded bytes are compared
// with the source buffers, listed hashes with hashes of the source bytes computed here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import {
  createRepo,
  deleteFiles,
  deleteRepo,
  downloadFile,
  HubApiError,
  listFiles,
  pathsInfo,
  uploadFiles,
} from "@huggingface/hub";
import { fileHash, getChunks, hashToHex } from "@huggingface/xetchunk-wasm";

import {
  assertSameBytes,
  countingFetch,
  env,
  newStats,
  randomBytes,
  repetitiveBytes,
  requestCount,
  sentBytes,
} from "./support.mjs";

const hubUrl = env("XETSTORE_URL");
const adminToken = env("XETSTORE_TOKEN");
const xetstoreBin = env("XETSTORE_BIN");
const dataDir = env("XETSTORE_DATA_DIR");

const NS = "interop";
const FILES = `buckets/${NS}/files`; // public: the main bucket
const PRIVATE = `buckets/${NS}/private`;
const SCOPED = `buckets/${NS}/scoped`; // the bucket a scoped write token may write
const OTHER = `buckets/${NS}/other`; // one it may not (nobody uploads here with another token first:
// the client caches CAS write tokens per bucket URL, not per user token)

const MiB = 1024 * 1024;
const BIG = 20 * MiB;
const TIMEOUT = 10 * 60 * 1000;

// The source of truth: path -> bytes, for everything uploaded to FILES.
const sources = new Map([
  ["empty.bin", new Uint8Array(0)],
  ["small/one-byte.bin", Uint8Array.of(0x5a)],
  ["small/100k.bin", randomBytes(100 * 1024, "100k")],
  ["big/random-20m.bin", randomBytes(BIG, "random-20m")],
  ["big/repetitive-20m.txt", repetitiveBytes(BIG)],
  ["nested/dir with space/naïve ü.txt", new TextEncoder().encode("a path with a space and non-ASCII letters\n")],
]);
const VERSIONED = "big/versioned.bin";
const versionedV1 = randomBytes(BIG, "versioned-v1");
// v2: the same file with 1 % of its bytes (one contiguous run in the middle) replaced.
const versionedV2 = versionedV1.slice();
const changedStart = 7 * MiB + 12345;
const changedLength = Math.floor(BIG / 100);
versionedV2.set(randomBytes(changedLength, "versioned-v2-patch"), changedStart);

function blobOf(bytes) {
  return new Blob([bytes]);
}

function makeToken(name, permission, scope) {
  const out = execFileSync(
    xetstoreBin,
    ["token", "--data-dir", dataDir, "create", "--name", name, "--permission", permission, "--scope", scope],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const token = out.trim().split("\n").at(-1).trim();
  assert.match(token, /^hf_[0-9a-zA-Z]+$/, `xetstore token create printed ${JSON.stringify(out)}`);
  return token;
}

/**
 * Xet file hashes computed on the test's side with the chunker and hashes the JS client
 * ships (@huggingface/xetchunk-wasm): the hashes the client gives the files it uploads,
 * computed independently of the server. That chunker is NOT xet-core's: on xet-core's
 * hitting-data vectors it cuts below the 8 KiB minimum (see the next test), so for some
 * inputs the JS client's file hash differs from xet-core's and from `xetstore hash` (which
 * passes ../shared/conformance/chunking.json). The server accepts any valid chunking.
 */
function referenceHashes(entries) {
  return new Map(entries.map(([p, bytes]) => [p, hashToHex(fileHash(getChunks(bytes)))]));
}

async function listAll(repo, opts = {}) {
  const out = [];
  for await (const entry of listFiles({ repo, hubUrl, accessToken: adminToken, fetch: countingFetch(), ...opts })) {
    out.push(entry);
  }
  return out;
}

async function expectRejects(promise, statuses, what) {
  let result;
  try {
    result = await promise;
  } catch (err) {
    assert.ok(err instanceof HubApiError || err instanceof Error, `${what}: threw ${err}`);
    if (err instanceof HubApiError) {
      assert.ok(statuses.includes(err.statusCode), `${what}: status ${err.statusCode} (want one of ${statuses}): ${err.message}`);
    } else {
      // The client wraps some failures in a plain Error ("Failed to get JWT token: 401 ..."):
      // the status must still be one of the expected ones.
      const m = /\b(\d{3})\b/.exec(err.message);
      assert.ok(m && statuses.includes(Number(m[1])), `${what}: unexpected error ${err.message}`);
    }
    return err;
  }
  assert.fail(`${what}: expected a rejection, got ${result === null ? "null" : typeof result}`);
}

// What FILES holds once both uploads are done, whatever the tests before found: each test
// checks the full intended state, so a failed upload fails every later check instead of
// leaving it with nothing to compare.
const expected = new Map([...sources, [VERSIONED, versionedV2]]); // path -> bytes
const refHash = referenceHashes([...expected]);

test("the JS client's chunker cuts xet-core's hitting-data inputs as this test expects", () => {
  // The input of xet-core's test_correctness_100kb_hitting_data: a 128-byte pattern plus
  // `pad` zero bytes, repeated to 64 KiB; cumulative chunk ends as xetchunk-wasm cuts them.
  // Pads 0 and 126 agree with xet-core; pads 1, 24 and 78 do not: xet-core (and
  // ../shared/conformance/chunking.json) ends the first chunk at 8320, 8272 and 8304, while
  // xetchunk-wasm cuts at 8191 and 8128, below the 8 KiB minimum.
  const base = [
    154, 52, 42, 34, 159, 75, 126, 224, 70, 236, 12, 196, 79, 236, 178, 124, 127, 50, 99, 178, 44, 176, 174, 126, 250,
    235, 205, 174, 252, 122, 35, 10, 20, 101, 214, 69, 193, 8, 115, 105, 158, 228, 120, 111, 136, 162, 198, 251, 211,
    183, 253, 252, 164, 147, 63, 16, 186, 162, 117, 23, 170, 36, 205, 187, 174, 76, 210, 174, 211, 175, 12, 173, 145,
    59, 2, 70, 222, 181, 159, 227, 182, 156, 189, 51, 226, 106, 24, 50, 183, 157, 140, 10, 8, 23, 212, 70, 10, 234, 23,
    33, 219, 254, 39, 236, 70, 49, 191, 116, 9, 115, 15, 101, 26, 159, 165, 220, 15, 170, 56, 125, 92, 163, 94, 235,
    38, 40, 49, 81,
  ];
  const vectors = {
    0: [8256, 16448, 24640, 32832, 41024, 49216, 57408, 65536],
    1: [8191, 16447, 24703, 32959, 41215, 49471, 57727, 65536],
    24: [8128, 16328, 24536, 32744, 40952, 49160, 57368, 65536],
    78: [8128, 16338, 24578, 32818, 41058, 49298, 57538, 65536],
    126: [8192, 16574, 24956, 33338, 41720, 50102, 58484, 65536],
  };
  for (const [pad, ends] of Object.entries(vectors)) {
    const data = [...base, ...new Array(Number(pad)).fill(0)];
    while (data.length < 65536) data.push(...data.slice(0, Math.min(65536 - data.length, data.length)));
    let end = 0;
    assert.deepEqual(getChunks(Uint8Array.from(data)).map((c) => (end += c.length)), ends, `pad ${pad}`);
  }
});

test("createRepo creates public and private buckets; creating one twice is a 409", { timeout: TIMEOUT }, async () => {
  const created = await createRepo({ repo: FILES, hubUrl, accessToken: adminToken, visibility: "public" });
  assert.equal(typeof created.repoUrl, "string", `createRepo answer ${JSON.stringify(created)}`);
  for (const repo of [PRIVATE, SCOPED, OTHER]) {
    await createRepo({ repo, hubUrl, accessToken: adminToken, visibility: "private" });
  }
  await expectRejects(createRepo({ repo: FILES, hubUrl, accessToken: adminToken }), [409], "second createRepo");
});

test("uploadFiles: empty, 1 byte, 100 KiB, 20 MiB random, 20 MiB repetitive, a non-ASCII path", { timeout: TIMEOUT }, async () => {
  const stats = newStats();
  await uploadFiles({
    repo: FILES,
    hubUrl,
    accessToken: adminToken,
    fetch: countingFetch(stats),
    files: [...sources].map(([p, bytes]) => ({ path: p, content: blobOf(bytes) })),
  });
  // The random 20 MiB cannot compress: at least its size went to /v1/xorbs.
  const xorbBytes = sentBytes(stats, "xorb-upload");
  assert.ok(xorbBytes >= BIG, `xorb bytes sent ${xorbBytes} < ${BIG}`);
  assert.ok(requestCount(stats, "shard-upload") >= 1, "no shard was uploaded");
  console.log(`# first upload: ${xorbBytes} bytes in ${requestCount(stats, "xorb-upload")} xorb(s)`);
});

test("a second version with 1 % of bytes changed sends far fewer xorb bytes", { timeout: TIMEOUT }, async () => {
  const v1 = newStats();
  await uploadFiles({
    repo: FILES,
    hubUrl,
    accessToken: adminToken,
    fetch: countingFetch(v1),
    files: [{ path: VERSIONED, content: blobOf(versionedV1) }],
  });
  const v2 = newStats();
  await uploadFiles({
    repo: FILES,
    hubUrl,
    accessToken: adminToken,
    fetch: countingFetch(v2),
    files: [{ path: VERSIONED, content: blobOf(versionedV2) }],
  });
  const sent1 = sentBytes(v1, "xorb-upload");
  const sent2 = sentBytes(v2, "xorb-upload");
  const dedup = JSON.stringify(v2.routes["dedup-query"] ?? {});
  console.log(`# versioned: v1 sent ${sent1} xorb bytes, v2 sent ${sent2} (changed ${changedLength}); v2 dedup queries ${dedup}`);
  assert.ok(sent1 >= BIG, `v1 sent ${sent1} xorb bytes, expected at least ${BIG}`);
  // The changed run plus at most a few neighbouring chunks (≤ 128 KiB each) on either side.
  assert.ok(sent2 < BIG * 0.05, `v2 sent ${sent2} xorb bytes (≥ 5 % of ${BIG}); dedup queries: ${dedup}`);
  assert.ok(sent2 >= changedLength * 0.9, `v2 sent only ${sent2} xorb bytes for ${changedLength} changed bytes`);
});

test("listFiles (recursive) shows every path with its size and Xet hash", { timeout: TIMEOUT }, async () => {
  const entries = await listAll(FILES, { recursive: true });
  const files = entries.filter((e) => e.type === "file");
  for (const e of entries) assert.ok(["file", "directory"].includes(e.type), `entry ${JSON.stringify(e)}`);
  assert.deepEqual(files.map((e) => e.path).sort(), [...expected.keys()].sort());
  for (const e of files) {
    assert.equal(e.size, expected.get(e.path).length, `size of ${e.path}`);
    assert.equal(e.xetHash, refHash.get(e.path), `xetHash of ${e.path}`);
  }
  assert.equal(new Set(entries.map((e) => e.path)).size, entries.length, "a path is listed twice");
});

test("listFiles: non-recursive root, a folder, and pages followed through the Link header", { timeout: TIMEOUT }, async () => {
  const root = await listAll(FILES, { recursive: false });
  assert.deepEqual(
    root.map((e) => `${e.type}:${e.path}`).sort(),
    ["file:empty.bin", "directory:big", "directory:nested", "directory:small"].sort(),
  );
  const small = await listAll(FILES, { recursive: false, path: "small" });
  assert.deepEqual(small.map((e) => e.path).sort(), ["small/100k.bin", "small/one-byte.bin"]);

  // Ask for pages of 2: the client itself must follow the server's Link rel="next".
  const stats = newStats();
  const paged = [];
  const fetchSmallPages = countingFetch(stats, {
    onRequest(url) {
      if (/\/tree/.test(url.pathname) && !url.searchParams.has("limit")) {
        url.searchParams.set("limit", "2");
        return url;
      }
      return null;
    },
  });
  for await (const e of listFiles({ repo: FILES, hubUrl, accessToken: adminToken, recursive: true, fetch: fetchSmallPages })) {
    paged.push(e);
  }
  const whole = await listAll(FILES, { recursive: true });
  assert.ok(requestCount(stats, "tree") >= 3, `only ${requestCount(stats, "tree")} tree page(s) fetched with limit=2`);
  assert.deepEqual(
    paged.map((e) => `${e.type}:${e.path}:${e.size}`),
    whole.map((e) => `${e.type}:${e.path}:${e.size}`),
  );
});

test("pathsInfo answers for present paths and omits a missing one", { timeout: TIMEOUT }, async () => {
  const info = await pathsInfo({
    repo: FILES,
    hubUrl,
    accessToken: adminToken,
    fetch: countingFetch(),
    paths: ["small/100k.bin", VERSIONED, "does/not/exist.bin"],
  });
  const byPath = new Map(info.map((i) => [i.path, i]));
  assert.deepEqual([...byPath.keys()].sort(), ["small/100k.bin", VERSIONED].sort());
  assert.equal(byPath.get(VERSIONED).size, BIG);
  assert.equal(byPath.get(VERSIONED).xetHash, refHash.get(VERSIONED));
  assert.equal(byPath.get("small/100k.bin").xetHash, refHash.get("small/100k.bin"));
});

/** Ranges [start, end) to read with slice(): edges, mid-chunk starts, chunk-crossing spans. */
function rangesFor(size) {
  if (size === 0) return [];
  if (size === 1) return [[0, 1]];
  const r = [
    [0, 1],
    [size - 1, size],
    [1, Math.min(size, 4097)],
    [Math.floor(size / 2) + 7, Math.floor(size / 2) + 8],
    [Math.floor(size / 3) + 1, size],
  ];
  if (size > 1 * MiB) {
    r.push([65536 * 3 + 17, 5 * MiB + 3]); // starts inside a chunk, spans many
    r.push([12345, 12345 + 200000]);
    r.push([size - 300001, size - 1]); // ends one byte short of the end
    r.push([changedStart - 5, changedStart + changedLength + 5]); // across the changed run
  }
  return r;
}

test("downloadFile returns every byte of every file, whole and sliced", { timeout: TIMEOUT }, async (t) => {
  const stats = newStats();
  const f = countingFetch(stats);
  for (const [p, bytes] of expected) {
    await t.test(p, async () => {
      const blob = await downloadFile({ repo: FILES, path: p, hubUrl, accessToken: adminToken, fetch: f });
      assert.ok(blob, `downloadFile(${p}) returned null`);
      assert.equal(blob.size, bytes.length, `size of ${p}`);
      assertSameBytes(new Uint8Array(await blob.arrayBuffer()), bytes, `whole ${p}`);
      for (const [s, e] of rangesFor(bytes.length)) {
        const part = new Uint8Array(await blob.slice(s, e).arrayBuffer());
        assertSameBytes(part, bytes.subarray(s, e), `${p} [${s}, ${e})`);
      }
    });
  }
  console.log(`# downloads: ${JSON.stringify(stats.routes)}`);
});

test("a plain resolve GET (xet: false) serves bytes and ranges", { timeout: TIMEOUT }, async () => {
  const p = "small/100k.bin";
  const bytes = expected.get(p);
  const blob = await downloadFile({ repo: FILES, path: p, hubUrl, accessToken: adminToken, fetch: countingFetch(), xet: false });
  assert.ok(blob, "downloadFile returned null");
  assert.equal(blob.size, bytes.length);
  assertSameBytes(new Uint8Array(await blob.arrayBuffer()), bytes, `whole ${p} over plain GET`);
  assertSameBytes(new Uint8Array(await blob.slice(1000, 60001).arrayBuffer()), bytes.subarray(1000, 60001), `${p} [1000, 60001) over plain GET`);
});

test("a public bucket is readable without a token", { timeout: TIMEOUT }, async () => {
  const p = "small/100k.bin";
  const blob = await downloadFile({ repo: FILES, path: p, hubUrl, fetch: countingFetch() });
  assert.ok(blob, "anonymous downloadFile returned null");
  assertSameBytes(new Uint8Array(await blob.arrayBuffer()), expected.get(p), `anonymous ${p}`);
  const listed = [];
  for await (const e of listFiles({ repo: FILES, hubUrl, recursive: true, fetch: countingFetch() })) listed.push(e.path);
  assert.ok(listed.includes(p), "anonymous listFiles misses a file");
});

test("deleteFiles removes entries: downloadFile returns null, listFiles no longer shows them", { timeout: TIMEOUT }, async () => {
  const gone = ["empty.bin", "small/one-byte.bin", "big/random-20m.bin"];
  await deleteFiles({ repo: FILES, hubUrl, accessToken: adminToken, fetch: countingFetch(), paths: gone });
  for (const p of gone) expected.delete(p);
  for (const p of gone) {
    const blob = await downloadFile({ repo: FILES, path: p, hubUrl, accessToken: adminToken, fetch: countingFetch() });
    assert.equal(blob, null, `downloadFile(${p}) after delete`);
  }
  const files = (await listAll(FILES, { recursive: true })).filter((e) => e.type === "file");
  assert.deepEqual(files.map((e) => e.path).sort(), [...expected.keys()].sort());
  // What is left still reads back intact.
  const p = "big/repetitive-20m.txt";
  const blob = await downloadFile({ repo: FILES, path: p, hubUrl, accessToken: adminToken, fetch: countingFetch() });
  assertSameBytes(new Uint8Array(await blob.arrayBuffer()), expected.get(p), `${p} after deleting others`);
});

test("special files (a FIFO, a device node) written by a mount are empty files to the stock client", { timeout: TIMEOUT }, async () => {
  // What `xetstore mount` stores for mkfifo and mknod: the empty file with the xetstore
  // "posix" extension (docs/SERVER.md), written here as a raw batch.
  const repo = `buckets/${NS}/special`;
  await createRepo({ repo, hubUrl, accessToken: adminToken, visibility: "private" });
  const zeros = "0".repeat(64);
  const lines = [
    { type: "addFile", path: "fifo", xetHash: zeros, posix: { mode: 0o10644, uid: 0, gid: 0 } },
    { type: "addFile", path: "dev/null", xetHash: zeros, posix: { mode: 0o20666, uid: 0, gid: 0, rdev: 0x103 } },
  ];
  const res = await fetch(`${hubUrl}/api/${repo}/batch`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/x-ndjson" },
    body: lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  });
  assert.equal(res.status, 200, await res.text());
  const entries = (await listAll(repo, { recursive: true })).filter((e) => e.type === "file");
  assert.deepEqual(entries.map((e) => `${e.path}:${e.size}:${e.xetHash}`).sort(), [`dev/null:0:${zeros}`, `fifo:0:${zeros}`]);
  const info = await pathsInfo({ repo, hubUrl, accessToken: adminToken, fetch: countingFetch(), paths: ["fifo", "dev/null"] });
  assert.deepEqual(info.map((i) => `${i.path}:${i.size}`).sort(), ["dev/null:0", "fifo:0"]);
  for (const p of ["fifo", "dev/null"]) {
    const blob = await downloadFile({ repo, path: p, hubUrl, accessToken: adminToken, fetch: countingFetch() });
    assert.ok(blob !== null, `downloadFile(${p})`);
    assert.equal((await blob.arrayBuffer()).byteLength, 0, `bytes of ${p}`);
  }
});

test("a private bucket: no token fails, the admin token and a read token for it work, another bucket's token fails", { timeout: TIMEOUT }, async () => {
  const p = "secret/data.bin";
  const bytes = randomBytes(300 * 1024, "private");
  // A read token cannot write, even to its own bucket. (First, before anyone wrote here: the
  // client caches CAS write tokens per bucket URL, whichever user token fetched them.)
  const reader = makeToken("interop-private-read", "read", `${NS}/private`);
  await expectRejects(
    uploadFiles({ repo: PRIVATE, hubUrl, accessToken: reader, fetch: countingFetch(), files: [{ path: "x.bin", content: blobOf(randomBytes(1000, "x")) }] }),
    [401, 403],
    "uploadFiles with a read token",
  );
  await uploadFiles({ repo: PRIVATE, hubUrl, accessToken: adminToken, fetch: countingFetch(), files: [{ path: p, content: blobOf(bytes) }] });

  const withAdmin = await downloadFile({ repo: PRIVATE, path: p, hubUrl, accessToken: adminToken, fetch: countingFetch() });
  assertSameBytes(new Uint8Array(await withAdmin.arrayBuffer()), bytes, "private file with the admin token");

  await expectRejects(
    downloadFile({ repo: PRIVATE, path: p, hubUrl, fetch: countingFetch() }).then((b) => b?.arrayBuffer() ?? null),
    [401, 403, 404],
    "anonymous downloadFile of a private bucket",
  );
  await expectRejects(listAll(PRIVATE, { recursive: true, accessToken: undefined }), [401, 403, 404], "anonymous listFiles of a private bucket");

  const withReader = await downloadFile({ repo: PRIVATE, path: p, hubUrl, accessToken: reader, fetch: countingFetch() });
  assert.ok(withReader, "downloadFile with a read token for the bucket returned null");
  assertSameBytes(new Uint8Array(await withReader.arrayBuffer()), bytes, "private file with its read token");

  const outsider = makeToken("interop-files-read", "read", `${NS}/files`);
  await expectRejects(
    downloadFile({ repo: PRIVATE, path: p, hubUrl, accessToken: outsider, fetch: countingFetch() }).then((b) => b?.arrayBuffer() ?? null),
    [401, 403, 404],
    "downloadFile of a private bucket with another bucket's read token",
  );
});

test("a write token scoped to one bucket writes there and fails to write to another", { timeout: TIMEOUT }, async () => {
  const writer = makeToken("interop-scoped-write", "write", `${NS}/scoped`);
  const bytes = randomBytes(2 * MiB + 3, "scoped");
  // As in the README: the content is a file: URL, which the client streams from disk.
  const dir = mkdtempSync(path.join(tmpdir(), "xetstore-interop-"));
  try {
    writeFileSync(path.join(dir, "mine.bin"), bytes);
    await uploadFiles({
      repo: SCOPED,
      hubUrl,
      accessToken: writer,
      fetch: countingFetch(),
      files: [{ path: "mine.bin", content: pathToFileURL(path.join(dir, "mine.bin")) }],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const blob = await downloadFile({ repo: SCOPED, path: "mine.bin", hubUrl, accessToken: writer, fetch: countingFetch() });
  assertSameBytes(new Uint8Array(await blob.arrayBuffer()), bytes, "file written with the scoped token");

  await expectRejects(
    uploadFiles({ repo: OTHER, hubUrl, accessToken: writer, fetch: countingFetch(), files: [{ path: "theirs.bin", content: blobOf(randomBytes(4096, "theirs")) }] }),
    [401, 403],
    "uploadFiles to another bucket with a scoped write token",
  );
  const other = await listAll(OTHER, { recursive: true });
  assert.deepEqual(other, [], "the refused upload left entries behind");
});

test("deleteRepo removes a bucket", { timeout: TIMEOUT }, async () => {
  await deleteRepo({ repo: SCOPED, hubUrl, accessToken: adminToken, fetch: countingFetch() });
  await expectRejects(listAll(SCOPED, { recursive: true }), [404], "listFiles of a deleted bucket");
  // A missing bucket is an error (the Hub's RepoNotFound), not a missing entry (null).
  const outcome = await downloadFile({ repo: SCOPED, path: "mine.bin", hubUrl, accessToken: adminToken, fetch: countingFetch() }).then(
    (blob) => (blob === null ? "null" : "a blob"),
    (err) => err.statusCode ?? String(err),
  );
  assert.equal(outcome, 404, "downloadFile from a deleted bucket");
});

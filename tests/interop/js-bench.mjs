// JS-client throughput against xetstore serve: upload (uploadFiles) and download
// (downloadFile + arrayBuffer) of a fresh random file, repeated; run by bench/run-js-bench,
// which starts the server and sets XETSTORE_URL, XETSTORE_TOKEN and XETSTORE_SERVER_PID.
//
//   node js-bench.mjs [--mb 200] [--runs 3] [--json FILE]
//
// Each run uploads new random bytes (a different seed) into a new bucket, so nothing
// deduplicates against an earlier run. Timings are wall clock around the client call;
// the data is generated before and verified after, outside the timed part. MB = 10^6 bytes.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";

import { createRepo, downloadFile, uploadFiles } from "@huggingface/hub";

import { assertSameBytes, countingFetch, env, newStats, randomBytes, sentBytes } from "./support.mjs";

const { values } = parseArgs({
  options: {
    mb: { type: "string", default: "200" },
    runs: { type: "string", default: "3" },
    json: { type: "string" },
  },
});
const size = Number(values.mb) * 1e6;
const runs = Number(values.runs);
assert.ok(Number.isInteger(size) && size > 0 && Number.isInteger(runs) && runs > 0, "bad --mb or --runs");

const hubUrl = env("XETSTORE_URL");
const accessToken = env("XETSTORE_TOKEN");
const serverPid = process.env.XETSTORE_SERVER_PID;
const clockTicks = 100; // USER_HZ on Linux

/** User + system CPU seconds of the server process so far (0 when unknown). */
function serverCpuSeconds() {
  if (!serverPid) return 0;
  try {
    const stat = readFileSync(`/proc/${serverPid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks; // utime, stime
  } catch {
    return 0;
  }
}

function clientCpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function measure(fn) {
  const c0 = clientCpuSeconds();
  const s0 = serverCpuSeconds();
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { result, seconds, clientCpu: clientCpuSeconds() - c0, serverCpu: serverCpuSeconds() - s0 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 1) => x.toFixed(d);

const cpuModel = os.cpus()[0]?.model ?? "unknown CPU";
console.log(`CPU: ${cpuModel}, ${os.cpus().length} cores; load average ${os.loadavg().map((l) => fmt(l, 2)).join(" ")}`);
console.log(`node ${process.version}; @huggingface/hub ${JSON.parse(readFileSync(new URL("./node_modules/@huggingface/hub/package.json", import.meta.url))).version}`);
console.log(`file: ${size / 1e6} MB of random bytes, ${runs} run(s), server ${hubUrl}`);

const results = [];
const stamp = Date.now().toString(36);
for (let i = 0; i < runs; i++) {
  const repo = `buckets/bench/js-${stamp}-${i}`;
  await createRepo({ repo, hubUrl, accessToken, visibility: "private" });
  const bytes = randomBytes(size, `js-bench-${stamp}-${i}`);

  const stats = newStats();
  const up = await measure(() =>
    uploadFiles({ repo, hubUrl, accessToken, fetch: countingFetch(stats), files: [{ path: "random.bin", content: new Blob([bytes]) }] }),
  );
  const down = await measure(async () => {
    const blob = await downloadFile({ repo, path: "random.bin", hubUrl, accessToken });
    assert.ok(blob, "downloadFile returned null");
    return new Uint8Array(await blob.arrayBuffer());
  });
  assertSameBytes(down.result, bytes, `run ${i + 1}: downloaded bytes`);

  const r = {
    run: i + 1,
    uploadMBps: size / 1e6 / up.seconds,
    downloadMBps: size / 1e6 / down.seconds,
    upload: { seconds: up.seconds, clientCpu: up.clientCpu, serverCpu: up.serverCpu, xorbBytes: sentBytes(stats, "xorb-upload") },
    download: { seconds: down.seconds, clientCpu: down.clientCpu, serverCpu: down.serverCpu },
    loadavg: os.loadavg()[0],
  };
  results.push(r);
  console.log(
    `run ${r.run}: upload ${fmt(r.uploadMBps)} MB/s (${fmt(up.seconds, 2)} s; client CPU ${fmt(up.clientCpu, 2)} s, server CPU ${fmt(up.serverCpu, 2)} s)` +
      `, download ${fmt(r.downloadMBps)} MB/s (${fmt(down.seconds, 2)} s; client CPU ${fmt(down.clientCpu, 2)} s, server CPU ${fmt(down.serverCpu, 2)} s)` +
      `, load ${fmt(r.loadavg, 2)}`,
  );
}

const summary = {
  cpu: cpuModel,
  cores: os.cpus().length,
  node: process.version,
  sizeMB: size / 1e6,
  runs,
  uploadMBpsMedian: median(results.map((r) => r.uploadMBps)),
  downloadMBpsMedian: median(results.map((r) => r.downloadMBps)),
  loadavgEnd: os.loadavg(),
  results,
};
console.log(
  `median of ${runs}: upload ${fmt(summary.uploadMBpsMedian)} MB/s, download ${fmt(summary.downloadMBpsMedian)} MB/s; load average now ${os.loadavg().map((l) => fmt(l, 2)).join(" ")}`,
);
// CPU seconds do not depend on how busy the machine is: size / client CPU is the rate the
// client could reach with a core of its own, what a loaded machine's wall clock hides.
const cpuRate = (phase) => median(results.map((r) => size / 1e6 / r[phase].clientCpu));
const serverCpu = (phase) => median(results.map((r) => r[phase].serverCpu));
summary.uploadMBPerClientCpuSecond = cpuRate("upload");
summary.downloadMBPerClientCpuSecond = cpuRate("download");
console.log(
  `median per client CPU second: upload ${fmt(summary.uploadMBPerClientCpuSecond)} MB, download ${fmt(summary.downloadMBPerClientCpuSecond)} MB` +
    `; server CPU per run: upload ${fmt(serverCpu("upload"), 2)} s, download ${fmt(serverCpu("download"), 2)} s`,
);
if (values.json) {
  writeFileSync(values.json, JSON.stringify(summary, null, 2) + "\n");
}

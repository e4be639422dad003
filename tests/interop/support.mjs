// Helpers shared by the interop test and the JS-client benchmark: deterministic data, a
// fetch wrapper that counts request bytes per route and traces failed requests, byte
// comparison that reports the first difference instead of dumping megabytes.
import { createCipheriv, createHash, webcrypto } from "node:crypto";
import { appendFileSync } from "node:fs";

// Node 18 (Debian 12's nodejs) has no global `crypto` without a flag; the client calls
// crypto.randomUUID(). Node 20+ already has it.
if (!globalThis.crypto) {
  globalThis.crypto = webcrypto;
}

export function env(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set (run this through tests/interop/run or bench/run-js-bench)`);
  }
  return v;
}

/** `n` pseudo-random bytes, fully determined by `seed` (AES-128-CTR keystream). */
export function randomBytes(n, seed) {
  const key = createHash("sha256").update(`xetstore-interop:${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv("aes-128-ctr", key, Buffer.alloc(16));
  const out = Buffer.concat([cipher.update(Buffer.alloc(n)), cipher.final()]);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** `n` bytes of a short text line repeated: highly compressible, and its chunks repeat. */
export function repetitiveBytes(n) {
  const line = Buffer.from("xetstore interop: the same sixty-four byte line, over and over.\n");
  const out = Buffer.alloc(n);
  for (let off = 0; off < n; off += line.length) {
    line.copy(out, off, 0, Math.min(line.length, n - off));
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

export function sha256Hex(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Asserts that `actual` equals `expected` byte for byte; the message names the first
 * differing offset and the lengths, never the contents.
 */
export function assertSameBytes(actual, expected, what) {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const e = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(e)) {
    return;
  }
  let i = 0;
  const n = Math.min(a.length, e.length);
  while (i < n && a[i] === e[i]) {
    i++;
  }
  const detail =
    i < n
      ? `first difference at byte ${i} (got 0x${a[i].toString(16)}, want 0x${e[i].toString(16)})`
      : "one is a prefix of the other";
  throw new Error(`${what}: got ${a.length} bytes, want ${e.length}; ${detail}`);
}

function bodyLength(body) {
  if (body === undefined || body === null) return 0;
  if (typeof body === "string") return Buffer.byteLength(body);
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  if (body instanceof Blob) return body.size;
  return -1; // a stream: unknown
}

/** Which part of the API a request went to, for the byte counters. */
export function routeOf(method, pathname) {
  if (method === "POST" && /\/v1\/xorbs\//.test(pathname)) return "xorb-upload";
  if (method === "POST" && /\/v[12]\/shards$/.test(pathname)) return "shard-upload";
  if (/\/v1\/chunks\//.test(pathname)) return "dedup-query";
  if (/\/v[12]\/reconstructions/.test(pathname)) return "reconstruction";
  if (/\/v1\/transfer\/|\/xorbs?\//.test(pathname)) return "xorb-download";
  if (/\/xet-(read|write)-token$/.test(pathname)) return "token";
  if (/\/batch$/.test(pathname)) return "batch";
  if (/\/tree(\/|$)/.test(pathname)) return "tree";
  if (/\/resolve\//.test(pathname)) return "resolve";
  return "other";
}

/**
 * A `fetch` for the client's `fetch` parameter: forwards to the global fetch, counts
 * requests and request/response body bytes per route in `stats`, and appends one line per
 * request (with the answer's body for failures) to the file named by INTEROP_TRACE.
 */
export function countingFetch(stats = newStats(), { onRequest } = {}) {
  const traceFile = process.env.INTEROP_TRACE;
  const wrapped = async (input, init = {}) => {
    let url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    if (onRequest) {
      const changed = onRequest(url);
      if (changed) {
        url = changed;
        input = url.href;
      }
    }
    const method = (init.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const route = routeOf(method, url.pathname);
    const sent = bodyLength(init.body);
    const r = (stats.routes[route] ??= { requests: 0, sentBytes: 0, statuses: {} });
    r.requests++;
    r.sentBytes += Math.max(sent, 0);
    let resp;
    try {
      resp = await fetch(input, init);
    } catch (err) {
      if (traceFile) {
        appendFileSync(traceFile, `${method} ${url.pathname}${url.search.slice(0, 80)} -> network error ${err}\n`);
      }
      throw err;
    }
    r.statuses[resp.status] = (r.statuses[resp.status] ?? 0) + 1;
    if (traceFile) {
      let line = `${method} ${url.pathname}${url.search.slice(0, 80)} [${route}, ${sent} B sent] -> ${resp.status}`;
      if (!resp.ok) {
        const headers = ["content-type", "x-error-code", "www-authenticate"]
          .map((h) => (resp.headers.get(h) ? `${h}: ${resp.headers.get(h)}` : null))
          .filter(Boolean)
          .join("; ");
        const text = await resp
          .clone()
          .text()
          .catch(() => "<unreadable>");
        line += ` {${headers}} ${text.slice(0, 400)}`;
      }
      appendFileSync(traceFile, line + "\n");
    }
    return resp;
  };
  wrapped.stats = stats;
  return wrapped;
}

export function newStats() {
  return { routes: {} };
}

export function sentBytes(stats, route) {
  return stats.routes[route]?.sentBytes ?? 0;
}

export function requestCount(stats, route) {
  return stats.routes[route]?.requests ?? 0;
}

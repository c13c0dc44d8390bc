#!/usr/bin/env node
/**
 * The capture proxy's benchmarks, one script each under scripts/bench/ (each runs alone too, and
 * answers --help with its own options and what it prints); this entry picks one by its flag:
 *
 *   node scripts/bench-proxy.mjs [--rounds R] [--per-round N] [--rate Q] [--busy N] [--baseline=<checkout>]…
 *       latency: added time and CPU per request against direct and Node's floor (bench/proxy-latency.mjs)
 *   node scripts/bench-proxy.mjs --large [--responses N] [--mb M]
 *       memory over large responses (bench/proxy-large.mjs; defaults 8 responses of 50 MB)
 *   node scripts/bench-proxy.mjs --sustained [--clients N] [--seconds S] [--kb B]
 *   node scripts/bench-proxy.mjs --sustained --rate Q [--seconds S]
 *       memory and dropped records under load (bench/proxy-sustained.mjs; defaults 32, 60, 16)
 *   node scripts/bench-proxy.mjs --large-bodies [--bodies K] [--mb M]
 *       large request bodies beside a small client (bench/proxy-large-bodies.mjs; 16 of 50 MB)
 *   node scripts/bench-proxy.mjs --secrets [--bodies K] [--mb M] [--baseline=<checkout>] [--adversarial]
 *       the secrets scan: worst inputs, scanner alone, capture (bench/proxy-secrets.mjs; 24 of 1 MB)
 *   node scripts/bench-proxy.mjs --bombs [--mib M]
 *       gzip and brotli bombs beside an ordinary request (bench/proxy-bombs.mjs; 256 MiB)
 *
 * Every benchmark stops what it started (the built CLI's proxies and mocks, spinning processes,
 * upstream servers, temporary folders) however it ends: a step that fails, or SIGINT/SIGTERM
 * (scripts/bench/harness.mjs).
 */
import "./help.mjs";

const benches = [
  ["--secrets", "./bench/proxy-secrets.mjs"],
  ["--sustained", "./bench/proxy-sustained.mjs"],
  ["--large-bodies", "./bench/proxy-large-bodies.mjs"],
  ["--large", "./bench/proxy-large.mjs"],
  ["--bombs", "./bench/proxy-bombs.mjs"],
];
const chosen = benches.find(([flag]) => process.argv.includes(flag))?.[1] ?? "./bench/proxy-latency.mjs";
await (await import(chosen)).main();

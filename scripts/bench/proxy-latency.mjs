#!/usr/bin/env node
/**
 * The capture proxy's added latency and CPU per request, against a direct connection and Node's floor.
 *
 *   node scripts/bench/proxy-latency.mjs [--rounds R] [--per-round N] [--rate Q] [--busy N]
 *       [--baseline=<checkout>]… [--cpu-prof=<dir>]                       (defaults 10, 100, 200/s)
 *   (or node scripts/bench-proxy.mjs with the same flags)
 *
 * Starts the built `mock` (a probe of enough text steps, no database) and the built `proxy` in front
 * of it (database on, as a user runs it), then sends small chat completions requests at Q per second,
 * streamed and not, straight to the mock and through the proxy; with `--baseline=<checkout>` (once or
 * more) through that checkout's built proxy too, in the same rounds. Prints the CPU per request of
 * each proxy's relay thread (its main thread, from /proc) and of its whole process; `--cpu-prof=<dir>`
 * writes each relay's CPU profiles there. The floor takes its turn too: a relay of node:http and
 * undici with nothing of ours (scripts/bench-floor-relay.mjs), so what it adds is what Node alone
 * costs on this machine. The kinds take turns in every round, so a busy machine slows all alike.
 * Prints per kind the median of the round medians and the p99, each relay's added time, and the very
 * first request through a fresh proxy. `--busy N` then runs the rounds again while N processes spin
 * on a core each (stopped afterwards, whatever happens), and prints the same beside it.
 */
import "../help.mjs";
import { writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { basename, join } from "node:path";
import { stopChild, withHarness } from "./harness.mjs";
import {
  flag,
  loadLine,
  median,
  option,
  options,
  paced,
  percentile,
  proxyCpu,
  root,
  runIfMain,
  smallBody,
  startCli,
  timedRequest,
} from "./proxy-kit.mjs";

const rounds = flag("rounds", 10);
const perRound = flag("per-round", 100);
const rate = flag("rate", 200);

/** Every kind `perRound` times per round, the kinds taking turns; each round's median and p99 per kind. */
async function measureRounds(agent, kinds) {
  const samples = kinds.map(() => []);
  const roundMedians = kinds.map(() => []);
  const roundP99s = kinds.map(() => []);
  for (let round = 0; round < rounds; round++) {
    // The order of the kinds turns each round, so none always runs right after another.
    for (let k = 0; k < kinds.length; k++) {
      const i = (k + round) % kinds.length;
      const times = await paced(perRound, rate, () => timedRequest(agent, kinds[i].url, kinds[i].body));
      samples[i].push(...times);
      roundMedians[i].push(median(times));
      roundP99s[i].push(percentile(times, 99));
    }
  }
  return { samples, roundMedians, roundP99s };
}

/**
 * Per kind the median of round medians and the p99; per proxy and form the added time (`pairs`:
 * direct, proxied, label). The added p99 is also taken round by round, as the median is: one stall
 * of the machine in one round then moves one difference, not the whole run's tail.
 */
function printLatency(kinds, { samples, roundMedians, roundP99s }, pairs) {
  console.log(
    `${rounds} rounds x ${perRound} requests per kind at ${rate}/s; ms from sending to the reply's last byte`,
  );
  console.log(`${"".padEnd(24)} ${"median of round medians".padStart(24)} ${"p99".padStart(8)}`);
  const stat = kinds.map((kind, i) => ({ kind, med: median(roundMedians[i]), p99: percentile(samples[i], 99) }));
  for (const { kind, med, p99 } of stat)
    console.log(`${kind.name.padEnd(24)} ${med.toFixed(3).padStart(24)} ${p99.toFixed(3).padStart(8)}`);
  for (const [direct, proxied, label] of pairs) {
    const added = median(roundMedians[proxied].map((m, r) => m - roundMedians[direct][r]));
    const addedP99 = median(roundP99s[proxied].map((p, r) => p - roundP99s[direct][r]));
    const ratio = (stat[proxied].med / stat[direct].med).toFixed(2);
    console.log(
      `${label}: adds ${added.toFixed(3)} ms median (median of per-round differences; ${ratio}x direct), ` +
        `${addedP99.toFixed(3)} ms at p99 (per round; whole run ${(stat[proxied].p99 - stat[direct].p99).toFixed(3)})`,
    );
  }
}

/**
 * The relays measured: this checkout's proxy, with `--baseline=<checkout>` that checkout's built
 * proxy too, and the floor (scripts/bench-floor-relay.mjs: node:http and undici with nothing of
 * ours), all in front of the same mock, each on the harness.
 */
async function startRelays(harness, mockUrl, runs) {
  // `--baseline` may be given more than once: each is a side, named by its folder when there are several.
  const baselines = options("baseline");
  const label = (checkout) => (baselines.length > 1 ? `base-${basename(checkout)}` : "baseline");
  const sides = [
    { label: "proxy", checkout: root },
    ...baselines.map((checkout) => ({ label: label(checkout), checkout })),
  ];
  for (const side of sides) {
    // The proxy's live lines go to a pipe that is read, as a terminal would take them. Each side has a
    // runs folder of its own: a baseline from before a database format change refuses the newer database.
    const args = ["proxy", "--upstream", mockUrl, "--runs", join(runs, side.label), "--name", `bench-${side.label}`];
    Object.assign(side, await startCli(harness, args, { stderr: "pipe", checkout: side.checkout }));
    side.child.stderr.resume();
  }
  const profile = option("cpu-prof");
  const flags = profile ? ["--cpu-prof", `--cpu-prof-dir=${join(profile, "floor")}`] : [];
  const floorScript = join(root, "scripts/bench-floor-relay.mjs");
  return [...sides, { label: "floor", ...(await harness.startListening(floorScript, [mockUrl], { flags })) }];
}

/**
 * `--busy N`: N processes that each keep a core busy until stopped. Each also ends itself once this
 * process is gone (it looks every few milliseconds), so a bench killed mid-round leaves none spinning.
 */
const SPIN =
  "for (;;) { for (let i = 0; i < 1e7; i++); try { process.kill(Number(process.argv[1]), 0); } catch { process.exit(); } }";

/** Direct, then each relay's streamed and JSON kinds; `pairs` says which direct kind each relay kind adds to. */
function latencyKinds(mockUrl, relays) {
  const kinds = [
    { name: "stream, direct", url: `${mockUrl}/chat/completions`, body: smallBody(true) },
    { name: "json, direct", url: `${mockUrl}/chat/completions`, body: smallBody(false) },
  ];
  const pairs = [];
  for (const side of relays)
    for (const [d, form] of [
      [0, "stream"],
      [1, "json"],
    ]) {
      pairs.push([d, kinds.length, `${form}, ${side.label}`]);
      kinds.push({ name: `${form}, ${side.label}`, url: `${side.url}/chat/completions`, body: smallBody(d === 0) });
    }
  return { kinds, pairs };
}

/** The rounds once, printed, with each relay's CPU per request over them. */
async function latencyPhase(agent, relays, kinds, pairs) {
  for (const side of relays) side.cpuBefore = proxyCpu(side.child.pid);
  const measured = await measureRounds(agent, kinds);
  // The proxy's capture runs after each reply; let it finish before its CPU time is read.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  printLatency(kinds, measured, pairs);
  const proxied = rounds * perRound * 2;
  for (const side of relays) {
    const after = proxyCpu(side.child.pid);
    const per = (key) => ((after[key] - side.cpuBefore[key]) / proxied).toFixed(3);
    console.log(`CPU per request, ${side.label}: relay thread ${per("relay")} ms, whole process ${per("all")} ms`);
  }
  console.log(loadLine());
}

/** The rounds again while `count` processes keep cores busy; the spinners are stopped when this phase ends. */
async function busyPhase(harness, count, agent, relays, kinds, pairs) {
  console.log(`\nagain with ${count} core(s) kept busy by spinning processes (--busy ${count}):`);
  const spinners = Array.from({ length: count }, () =>
    harness.spawn(process.execPath, ["-e", SPIN, String(process.pid)], { stdio: "ignore" }),
  );
  try {
    await latencyPhase(agent, relays, kinds, pairs);
  } finally {
    await Promise.all(spinners.map((spinner) => stopChild(spinner)));
  }
}

export async function main() {
  const busy = flag("busy", 0);
  await withHarness(async (harness) => {
    const runs = harness.tempDir("bench-proxy-");
    const sides = 2 + options("baseline").length;
    const steps = rounds * perRound * 2 * (1 + sides) * (busy > 0 ? 2 : 1) + 10;
    const probe = join(runs, "bench.yaml");
    writeFileSync(probe, `name: bench\nmodel:\n  script:\n${"    - text: ok\n".repeat(steps)}prompts: [go]\n`);
    const mock = await startCli(harness, ["mock", probe, "--runs", runs, "--no-db"]);
    const agent = harness.defer(() => agent.destroy(), new Agent({ keepAlive: true }));
    const relays = await startRelays(harness, mock.url, runs);
    const { kinds, pairs } = latencyKinds(mock.url, relays);
    // The very first request through a proxy that has just printed LISTENING, against the mock's own first.
    const firstDirect = await timedRequest(agent, kinds[0].url, kinds[0].body);
    const firstProxy = await timedRequest(agent, kinds[2].url, kinds[2].body);
    for (const side of relays.slice(1)) await timedRequest(agent, `${side.url}/chat/completions`, smallBody(true));
    await latencyPhase(agent, relays, kinds, pairs);
    if (busy > 0) await busyPhase(harness, busy, agent, relays, kinds, pairs);
    console.log(
      `first request: direct ${firstDirect.toFixed(1)} ms, through the fresh proxy ${firstProxy.toFixed(1)} ms`,
    );
    console.log("target: added median < 0.5 ms, added p99 < 2 ms, first request near the median");
    console.log("floor: node:http and undici relaying with nothing of ours (scripts/bench-floor-relay.mjs)");
  });
}

await runIfMain(import.meta, main);

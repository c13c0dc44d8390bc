/**
 * NODE_EXTRA_CA_CERTS held back from the CLI's start (run.sh, src/processes/extra-ca-certs.ts): the CLI, started
 * with the file named by PAYLOAD_PROBE_EXTRA_CA_CERTS instead, still trusts it on its own https
 * connections (the capture proxy's upstream, an OTLP collector), hands the variable back to the
 * processes it starts, and run.sh is what moves it. Real processes against a real TLS server on
 * 127.0.0.1 whose certificate is self-signed (test/fixtures/tls, valid until 2126), so only that file
 * makes it trusted.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFERRED_CA_ENV } from "../../src/processes/extra-ca-certs.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { startOtlpReceiver } from "../analysis/otel/otlp-receiver.js";
import { chatBody, postChat, startCli } from "../capture/http-harness.js";
import { MAIN } from "../cli/scratch-cli.js";
import { stopAfterTest } from "../fixtures/children.js";
import { copySharedRuns } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

const CERT_FILE = join(PROJECT_ROOT, "test/fixtures/tls/cert.pem");
const TLS = {
  key: readFileSync(join(PROJECT_ROOT, "test/fixtures/tls/key.pem"), "utf8"),
  cert: readFileSync(CERT_FILE, "utf8"),
};

/** The environment run.sh starts the CLI with on Node 20 when the user's shell names a CA file. */
function heldBack(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, [DEFERRED_CA_ENV]: CERT_FILE };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Neither variable: Node's own roots only. */
function withoutExtraCas(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env[DEFERRED_CA_ENV];
  return env;
}

let upstream: ReturnType<typeof createServer>;
let upstreamUrl: string;

beforeAll(async () => {
  upstream = createServer(TLS, (request, response) => {
    request.resume();
    request.on("end", () =>
      response.writeHead(200, { "content-type": "application/json" }).end('{"answer":"over TLS"}'),
    );
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `https://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
afterEach(removeTempDirs);

describe("NODE_EXTRA_CA_CERTS held back from the CLI's start", () => {
  it("the capture proxy trusts the held-back file for its https upstream, and nothing else makes it trusted", async () => {
    const runs = tempDir("extra-ca-proxy-");
    for (const [env, status] of [
      [heldBack(), 200],
      [withoutExtraCas(), 502],
    ] as const) {
      const proxy = await startCli(["proxy", "--upstream", upstreamUrl, "--runs", runs, "--no-db"], env);
      try {
        const response = await postChat(`${proxy.url}/chat/completions`, chatBody("hello"));
        expect(response.status).toBe(status);
        if (status === 200) expect(await response.json()).toEqual({ answer: "over TLS" });
        else expect(await response.text()).toMatch(/self[- ]signed/i);
      } finally {
        await proxy.stop();
      }
    }
  });

  it("the OTLP exporter trusts it for an https collector", async () => {
    const receiver = await startOtlpReceiver(TLS);
    const runs = tempDir("extra-ca-otel-");
    try {
      await copySharedRuns(["p1"], runs);
      // Not spawnSync: the receiver answers from this process's event loop.
      const child = stopAfterTest(
        spawn(
          process.execPath,
          [MAIN, "export", "otel", "p1", "--runs", runs, "--endpoint", receiver.url, "--content", "none"],
          { cwd: PROJECT_ROOT, env: heldBack(), stdio: ["ignore", "ignore", "pipe"] },
        ),
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(receiver.spans().some((span) => span.name === "invoke_agent p1")).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it("run.sh starts the CLI without the variable and the CLI gives it back to what it starts (npm here)", () => {
    const { checkout, dumps, bin } = runShCheckout();
    const result = spawnSync(join(checkout, "run.sh"), ["agents", "install", "pi"], {
      env: {
        ...withoutExtraCas(),
        NODE_EXTRA_CA_CERTS: CERT_FILE,
        PATH: `${bin}:${process.env.PATH}`,
        XDG_CACHE_HOME: join(dumps, "cache"),
        DUMPS: dumps,
      },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.stderr).toContain("npm install for pi failed (exit 1)");
    const npmEnv = readFileSync(join(dumps, "npm.env"), "utf8").split("\n");
    expect(npmEnv).toContain(`NODE_EXTRA_CA_CERTS=${CERT_FILE}`);
    expect(npmEnv.filter((line) => line.startsWith(`${DEFERRED_CA_ENV}=`))).toEqual([]);
    // What the CLI's process was started with (npm's parent), as the kernel kept it. Node 22 and later
    // read the file only when a TLS connection needs it, so run.sh leaves the variable where it is.
    const cliEnv = readFileSync(join(dumps, "cli.env"), "utf8").split("\0");
    const deferred = Number(process.versions.node.split(".")[0]) < 22;
    expect(cliEnv.filter((line) => line.startsWith("NODE_EXTRA_CA_CERTS="))).toEqual(
      deferred ? [] : [`NODE_EXTRA_CA_CERTS=${CERT_FILE}`],
    );
    expect(cliEnv.filter((line) => line.startsWith(`${DEFERRED_CA_ENV}=`))).toEqual(
      deferred ? [`${DEFERRED_CA_ENV}=${CERT_FILE}`] : [],
    );
  });
});

/**
 * A checkout run.sh sees as installed and built, made of links to this one: its sources and lockfile
 * are older than the build stamp, so it neither installs nor rebuilds (the real dist/ stays as it
 * is while other tests use it). `npm` on the returned PATH folder records its environment and its
 * parent's (the CLI's) starting environment, then fails.
 */
function runShCheckout(): { checkout: string; dumps: string; bin: string } {
  const base = tempDir("extra-ca-runsh-");
  const checkout = join(base, "checkout");
  const dumps = join(base, "dumps");
  const bin = join(base, "bin");
  for (const dir of [checkout, dumps, bin, join(checkout, "src"), join(checkout, "scripts")]) mkdirSync(dir);
  copyFileSync(join(PROJECT_ROOT, "run.sh"), join(checkout, "run.sh"));
  for (const file of ["package-lock.json", "tsconfig.json", "tsconfig.browser.json", "scripts/bundle.mjs"])
    copyFileSync(join(PROJECT_ROOT, file), join(checkout, file));
  for (const link of ["node_modules", "dist", "probes", "fixtures", "package.json"])
    symlinkSync(join(PROJECT_ROOT, link), join(checkout, link));
  const old = new Date("2020-01-01T00:00:00Z");
  for (const path of ["src", "package-lock.json", "tsconfig.json", "tsconfig.browser.json", "scripts/bundle.mjs"])
    utimesSync(join(checkout, path), old, old);
  writeFileSync(
    join(bin, "npm"),
    '#!/bin/sh\nenv > "$DUMPS/npm.env"\ncat "/proc/$PPID/environ" > "$DUMPS/cli.env"\nexit 1\n',
  );
  chmodSync(join(bin, "npm"), 0o755);
  return { checkout, dumps, bin };
}

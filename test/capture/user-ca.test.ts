/**
 * The user's authority for `record --forward`: made once in the user's cache (the key 0600), kept
 * while it lasts, made anew when it would not outlive a host certificate signed today, and the host
 * certificates it signs verify against it for their host alone.
 */
import { X509Certificate } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authorityCertificate, loadForge } from "../../src/capture/local-tls.js";
import { authorityDir, removeUserAuthority, userAuthority } from "../../src/capture/user-ca.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(() => removeTempDirs());

const DAY = 24 * 3600 * 1000;

describe("the user's authority", () => {
  it("is made once, kept while it lasts, and signs certificates for one host each", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    const first = await userAuthority(env);
    const dir = authorityDir(env);
    expect(statSync(join(dir, "key.pem")).mode & 0o777).toBe(0o600);
    const authority = new X509Certificate(first.certPem);
    expect(Date.parse(authority.validTo) - Date.now()).toBeGreaterThan(300 * DAY);
    expect((await userAuthority(env)).certPem).toBe(first.certPem);

    const host = new X509Certificate((await first.certificateFor("api.anthropic.com")).cert);
    expect(host.verify(authority.publicKey)).toBe(true);
    expect(host.checkHost("api.anthropic.com")).toBe("api.anthropic.com");
    expect(host.checkHost("api.openai.com")).toBeUndefined();

    expect(removeUserAuthority(env)).toBe(true);
    expect(removeUserAuthority(env)).toBe(false);
  });

  it("is made anew when it would expire within a host certificate's week", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    await userAuthority(env);
    const dir = authorityDir(env);
    const forge = await loadForge();
    const key = forge.pki.privateKeyFromPem(readFileSync(join(dir, "key.pem"), "utf8"));
    const publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
    // The same key, its certificate lasting two more days only.
    const short = authorityCertificate(forge, { privateKey: key, publicKey }, "short", 2 * DAY);
    const shortPem = forge.pki.certificateToPem(short);
    writeFileSync(join(dir, "cert.pem"), shortPem);
    const renewed = await userAuthority(env);
    expect(renewed.certPem).not.toBe(shortPem);
    expect(Date.parse(new X509Certificate(renewed.certPem).validTo) - Date.now()).toBeGreaterThan(300 * DAY);
  });
});

/**
 * The user's authority for `record --forward`: made once in the user's cache (an ECDSA P-256 key,
 * 0600), kept while it lasts, made anew when it would not outlive a host certificate signed today,
 * and the host certificates it signs verify against it for their host alone. An RSA authority left
 * by an earlier version keeps signing until it runs out.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject, X509Certificate } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authorityCertificate, keysFromPem, loadX509 } from "../../src/capture/local-tls.js";
import { authorityDir, removeUserAuthority, userAuthority } from "../../src/capture/user-ca.js";
import { UserError } from "../../src/errors.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";
import { handshake } from "./tls-harness.js";

afterEach(() => removeTempDirs());

const DAY = 24 * 3600 * 1000;

const curveOf = (key: KeyObject) => `${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ""}`.trim();

/** The digest and signature a certificate was signed with, as @peculiar/x509 reads them. */
async function signatureOf(pem: string) {
  const x509 = await loadX509();
  return new x509.X509Certificate(pem).signatureAlgorithm;
}

describe("the user's authority", () => {
  it("is made once, kept while it lasts, and signs certificates for one host each", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    const first = await userAuthority(env);
    const dir = authorityDir(env);
    expect(statSync(join(dir, "key.pem")).mode & 0o777).toBe(0o600);
    expect(curveOf(createPrivateKey(readFileSync(join(dir, "key.pem"), "utf8")))).toBe("ec prime256v1");
    const authority = new X509Certificate(first.certPem);
    expect(authority.subject).toBe("CN=payload-probe record --forward (this user only)");
    expect(authority.ca).toBe(true);
    expect(curveOf(authority.publicKey)).toBe("ec prime256v1");
    expect(await signatureOf(first.certPem)).toMatchObject({ name: "ECDSA", hash: { name: "SHA-256" } });
    expect(Date.parse(authority.validTo) - Date.now()).toBeGreaterThan(300 * DAY);
    expect((await userAuthority(env)).certPem).toBe(first.certPem);

    const made = await first.certificateFor("api.anthropic.com");
    const host = new X509Certificate(made.cert);
    expect(curveOf(host.publicKey)).toBe("ec prime256v1");
    expect(await signatureOf(made.cert)).toMatchObject({ name: "ECDSA", hash: { name: "SHA-256" } });
    expect(host.verify(authority.publicKey)).toBe(true);
    expect(host.checkHost("api.anthropic.com")).toBe("api.anthropic.com");
    expect(host.checkHost("api.openai.com")).toBeUndefined();
    expect(host.subjectAltName).toBe("DNS:api.anthropic.com");
    expect(await handshake(made, first.certPem, "api.anthropic.com")).toEqual({ authorized: true });
    expect(await handshake(made, first.certPem, "api.openai.com")).toMatchObject({ authorized: false });
    const address = new X509Certificate((await first.certificateFor("::1")).cert);
    expect(address.subjectAltName).toBe("IP Address:0:0:0:0:0:0:0:1");

    expect(removeUserAuthority(env)).toBe(true);
    expect(removeUserAuthority(env)).toBe(false);
  });

  it("is made anew when it would expire within a host certificate's week", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    await userAuthority(env);
    const dir = authorityDir(env);
    const keys = (await keysFromPem(readFileSync(join(dir, "key.pem"), "utf8")))!;
    // The same key, its certificate lasting two more days only.
    const shortPem = (await authorityCertificate(await loadX509(), keys, "short", 2 * DAY)).toString("pem");
    writeFileSync(join(dir, "cert.pem"), shortPem);
    const renewed = await userAuthority(env);
    expect(renewed.certPem).not.toBe(shortPem);
    expect(Date.parse(new X509Certificate(renewed.certPem).validTo) - Date.now()).toBeGreaterThan(300 * DAY);
  });

  it("left by an earlier version with an RSA key, is kept and signs the hosts' ECDSA keys with SHA-256", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    const dir = authorityDir(env);
    // As earlier versions made it: an RSA 2048 key as PKCS #8 PEM, a year's self-signed certificate.
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const keys = (await keysFromPem(keyPem))!;
    const certPem = (await authorityCertificate(await loadX509(), keys, "earlier", 365 * DAY)).toString("pem");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "key.pem"), keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert.pem"), certPem);

    const kept = await userAuthority(env);
    expect(kept.certPem).toBe(certPem);
    expect(readFileSync(join(dir, "key.pem"), "utf8")).toBe(keyPem);
    const made = await kept.certificateFor("bedrock-runtime.us-east-1.amazonaws.com");
    const host = new X509Certificate(made.cert);
    expect(curveOf(host.publicKey)).toBe("ec prime256v1");
    expect(await signatureOf(made.cert)).toMatchObject({ name: "RSASSA-PKCS1-v1_5", hash: { name: "SHA-256" } });
    expect(host.checkIssued(new X509Certificate(certPem))).toBe(true);
    const accepted = await handshake(made, certPem, "bedrock-runtime.us-east-1.amazonaws.com");
    expect(accepted).toEqual({ authorized: true });
  });

  it("whose key file holds no key it can sign with is refused, naming the file", async () => {
    const env = { XDG_CACHE_HOME: tempDir("user-ca-") };
    await userAuthority(env);
    const keyFile = join(authorityDir(env), "key.pem");
    const { privateKey } = generateKeyPairSync("ed25519");
    writeFileSync(keyFile, privateKey.export({ type: "pkcs8", format: "pem" }));
    const refusal = await userAuthority(env).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UserError);
    expect((refusal as UserError).message).toContain(keyFile);
    expect((refusal as UserError).message).toContain("ECDSA P-256 or RSA");
  });
});

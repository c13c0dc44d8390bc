/**
 * The session's certificates for the proxy's HTTPS listener: ECDSA P-256 keys signed with SHA-256,
 * an authority that can sign server certificates and nothing below them, and a server certificate
 * for 127.0.0.1 and localhost that a TLS client trusting that authority accepts for those names.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadX509, localCertificate, VALID_MS } from "../../src/capture/local-tls.js";
import { handshake } from "./tls-harness.js";

const HOUR = 3600 * 1000;

describe("the session's certificate", () => {
  it("is ECDSA P-256 with SHA-256, in the shapes TLS clients expect, and a client trusting its authority accepts it", async () => {
    const before = Date.now();
    const made = await localCertificate();
    const authority = new X509Certificate(made.authority);
    const server = new X509Certificate(made.cert);
    const key = createPrivateKey(made.key);
    for (const publicKey of [authority.publicKey, server.publicKey, key]) {
      expect(publicKey.asymmetricKeyType).toBe("ec");
      expect(publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    }

    const x509 = await loadX509();
    const parsedAuthority = new x509.X509Certificate(made.authority);
    const parsedServer = new x509.X509Certificate(made.cert);
    for (const parsed of [parsedAuthority, parsedServer]) {
      expect(parsed.signatureAlgorithm).toMatchObject({ name: "ECDSA", hash: { name: "SHA-256" } });
      // 16 bytes, the first 01: positive and never shortened.
      expect(parsed.serialNumber).toMatch(/^01[0-9a-f]{30}$/);
      expect(parsed.notBefore.getTime()).toBeLessThanOrEqual(before - HOUR + 1000);
      expect(parsed.notBefore.getTime()).toBeGreaterThan(before - HOUR - 60_000);
      expect(parsed.notAfter.getTime() - parsed.notBefore.getTime()).toBeGreaterThanOrEqual(VALID_MS + HOUR - 1000);
    }
    expect(authority.subject).toBe("CN=payload-probe record (this session only)");
    expect(authority.issuer).toBe(authority.subject);
    expect(authority.ca).toBe(true);
    const authorityLimits = parsedAuthority.getExtension(x509.BasicConstraintsExtension)!;
    expect({
      critical: authorityLimits.critical,
      ca: authorityLimits.ca,
      pathLength: authorityLimits.pathLength,
    }).toEqual({ critical: true, ca: true, pathLength: 0 });
    const authorityUsage = parsedAuthority.getExtension(x509.KeyUsagesExtension)!;
    expect(authorityUsage.critical).toBe(true);
    expect(authorityUsage.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);

    expect(server.subject).toBe("CN=127.0.0.1");
    expect(server.checkIssued(authority)).toBe(true);
    expect(server.verify(authority.publicKey)).toBe(true);
    expect(server.ca).toBe(false);
    expect(parsedServer.getExtension(x509.BasicConstraintsExtension)!.critical).toBe(true);
    const serverUsage = parsedServer.getExtension(x509.KeyUsagesExtension)!;
    expect(serverUsage.critical).toBe(true);
    expect(serverUsage.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(server.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(server.subjectAltName).toBe("IP Address:127.0.0.1, DNS:localhost");

    expect(await handshake(made, made.authority)).toEqual({ authorized: true });
    expect(await handshake(made, made.authority, "localhost")).toEqual({ authorized: true });
    const refused = await handshake(made, made.authority, "example.com");
    expect(refused.authorized).toBe(false);
    expect(refused.error).toMatch(/example\.com/);
  });

  it("is new each time: another authority, another key, another serial number", async () => {
    const [one, two] = await Promise.all([localCertificate(), localCertificate()]);
    expect(one.authority).not.toBe(two.authority);
    expect(one.key).not.toBe(two.key);
    const serial = (pem: string) => new X509Certificate(pem).serialNumber;
    expect(serial(one.cert)).not.toBe(serial(two.cert));
    expect(await handshake(one, two.authority)).toMatchObject({ authorized: false });
  });
});

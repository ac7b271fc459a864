import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, sendingHostnameWarning, SETTINGS, trackingBaseWarning } from "../../src/config.js";

describe("loadConfig", () => {
  it("runs with no settings at all on the embedded database", () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBe("sqlite:./data/mailroom.db");
    expect(config.port).toBe(3000);
    expect(config.rateLimit).toEqual({ requests: 1200, windowSeconds: 60 });
  });

  it("reports every problem in one line", () => {
    expect(() => loadConfig({ PORT: "http", RATE_LIMIT_REQUESTS: "-1", DATABASE_URL: "postgres://x" })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: "http", RATE_LIMIT_REQUESTS: "-1", DATABASE_URL: "postgres://x" });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toContain("PORT");
      expect(message).toContain("RATE_LIMIT_REQUESTS");
      expect(message).toContain("DATABASE_URL");
    }
  });

  it("opens the operators' port only when METRICS_PORT is set", () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: "9464" }).metricsPort).toBe(9464);
    expect(() => loadConfig({ METRICS_PORT: "metrics" })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: "3000" })).toThrow(/METRICS_PORT must differ from PORT/);
  });

  it("runs the SMTP submission server on loopback without TLS by default, and takes its TLS files in pairs, implicit TLS only with them", () => {
    expect(loadConfig({}).submission).toEqual({ host: "127.0.0.1", port: 2587, maxMessageBytes: 10 * 1024 * 1024, maxConnections: 100, timeoutMs: 60_000, tlsKeyFile: null, tlsCertFile: null, proxyProtocolFrom: [], implicitTls: false });
    expect(() => loadConfig({ SUBMISSION_TLS_KEY_FILE: "/etc/mailroom/key.pem" })).toThrow(/SUBMISSION_TLS_KEY_FILE and SUBMISSION_TLS_CERT_FILE go together/);
    expect(() => loadConfig({ INBOUND_TLS_CERT_FILE: "/etc/mailroom/cert.pem" })).toThrow(/INBOUND_TLS_KEY_FILE and INBOUND_TLS_CERT_FILE go together/);
    expect(() => loadConfig({ SUBMISSION_IMPLICIT_TLS: "true" })).toThrow(/SUBMISSION_IMPLICIT_TLS=true needs SUBMISSION_TLS_KEY_FILE/);
    expect(() => loadConfig({ SUBMISSION_IMPLICIT_TLS: "yes" })).toThrow(/SUBMISSION_IMPLICIT_TLS must be true or false/);
    const tls = loadConfig({ SUBMISSION_TLS_KEY_FILE: "/k.pem", SUBMISSION_TLS_CERT_FILE: "/c.pem", SUBMISSION_IMPLICIT_TLS: "true", SUBMISSION_SMTP_PORT: "465" }).submission;
    expect(tls).toMatchObject({ port: 465, tlsKeyFile: "/k.pem", tlsCertFile: "/c.pem", implicitTls: true });
  });

  it("reads a PROXY protocol header on an SMTP server only from the load balancers it names, by exact address", () => {
    expect(loadConfig({}).inbound.proxyProtocolFrom).toEqual([]);
    expect(loadConfig({ INBOUND_PROXY_PROTOCOL_FROM: "10.0.0.5, ::1" }).inbound.proxyProtocolFrom).toEqual(["10.0.0.5", "::1"]);
    expect(loadConfig({ SUBMISSION_PROXY_PROTOCOL_FROM: "127.0.0.1" }).submission.proxyProtocolFrom).toEqual(["127.0.0.1"]);
    for (const bad of ["*", "true", "10.0.0.0/8", "lb.internal"]) {
      expect(() => loadConfig({ INBOUND_PROXY_PROTOCOL_FROM: bad }), bad).toThrow(/INBOUND_PROXY_PROTOCOL_FROM must be empty or comma-separated IP addresses/);
      expect(() => loadConfig({ SUBMISSION_PROXY_PROTOCOL_FROM: bad }), bad).toThrow(/SUBMISSION_PROXY_PROTOCOL_FROM must be empty or comma-separated IP addresses/);
    }
  });

  it("has every setting in the README's configuration table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const firstCells = readme.split("\n").filter((line) => line.startsWith("| `")).map((line) => line.split("|")[1]!);
    const named = new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1])));
    expect(Object.values(SETTINGS).map((setting) => setting.env).filter((env) => !named.has(env))).toEqual([]);
  });

  it("trusts the X-Forwarded-For of the proxies TRUST_PROXY names, and of none by default", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "127.0.0.1, 10.0.0.0/8,::1" }).trustProxy).toEqual(["127.0.0.1", "10.0.0.0/8", "::1"]);
    for (const bad of ["true", "2", "10.0.0.0/33", "proxy.internal", "::1/129", "10.0.0.1/8/8"]) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
  });

  it("points tracking links at TRACKING_BASE_URL, else PUBLIC_URL, else this server on localhost, and refuses anything but an origin", () => {
    expect(loadConfig({ TRACKING_BASE_URL: "https://t.mail.example.com/" }).trackingBaseUrl).toBe("https://t.mail.example.com");
    expect(loadConfig({ PUBLIC_URL: "https://mail.example.com" }).trackingBaseUrl).toBe("https://mail.example.com");
    expect(loadConfig({ PORT: "8080" }).trackingBaseUrl).toBe("http://localhost:8080");
    for (const bad of ["t.mail.example.com", "https://t.example/path", "ftp://t.example", "https://user@t.example"]) expect(() => loadConfig({ TRACKING_BASE_URL: bad }), bad).toThrow(/TRACKING_BASE_URL/);
  });

  it("keeps PUBLIC_URL as the origin a browser sends, and refuses a path, query, fragment or credentials", () => {
    expect(loadConfig({}).publicUrl).toBeNull();
    for (const [given, origin] of [
      ["https://mail.example.com", "https://mail.example.com"],
      ["https://Mail.Example.COM/", "https://mail.example.com"],
      ["https://mail.example.com:443", "https://mail.example.com"],
      ["http://mail.example.com:80//", "http://mail.example.com"],
      ["https://mail.example.com:8443", "https://mail.example.com:8443"],
      ["http://[::1]:3000", "http://[::1]:3000"],
    ]) {
      expect(loadConfig({ PUBLIC_URL: given! }).publicUrl, given).toBe(origin);
      expect(loadConfig({ PUBLIC_URL: given! }).trackingBaseUrl, given).toBe(origin);
    }
    for (const bad of ["mail.example.com", "ftp://mail.example.com", "https://mail.example.com/app", "https://mail.example.com/?a=1", "https://mail.example.com/#x", "https://ada:secret@mail.example.com", "https://"]) {
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(/PUBLIC_URL must be an origin such as https:\/\/mail\.example\.com/);
    }
  });

  it("warns (without refusing) when tracking links would point at this machine or go over plain HTTP", () => {
    expect(trackingBaseWarning(loadConfig({}))).toMatch(/this machine, http:\/\/localhost:3000.*TRACKING_BASE_URL/);
    expect(trackingBaseWarning(loadConfig({ TRACKING_BASE_URL: "https://localhost:8443" }))).toMatch(/this machine/);
    expect(trackingBaseWarning(loadConfig({ TRACKING_BASE_URL: "https://[::1]" }))).toMatch(/this machine/);
    expect(trackingBaseWarning(loadConfig({ TRACKING_BASE_URL: "http://t.mail.example.com" }))).toMatch(/plain HTTP.*RFC 8058/);
    expect(trackingBaseWarning(loadConfig({ PUBLIC_URL: "https://mail.example.com" }))).toBeNull();
    expect(trackingBaseWarning(loadConfig({ TRACKING_BASE_URL: "https://t.mail.example.com" }))).toBeNull();
  });

  it("takes the keys SECRET_KEY replaced from SECRET_KEY_PREVIOUS, newest first, only beside a new SECRET_KEY", () => {
    const [a, b, c] = ["aa", "bb", "cc"].map((pair) => pair.repeat(32)) as [string, string, string];
    expect(loadConfig({}).secretKeyPrevious).toEqual([]);
    expect(loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: ` ${b}, ${c} ` }).secretKeyPrevious).toEqual([b, c]);
    expect(() => loadConfig({ SECRET_KEY_PREVIOUS: b })).toThrow(/SECRET_KEY_PREVIOUS needs SECRET_KEY/);
    expect(() => loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: "abc" })).toThrow(/SECRET_KEY_PREVIOUS must be 64-hex-character keys/);
    expect(() => loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: `${b},${a.toUpperCase()}` })).toThrow(/must not list SECRET_KEY itself/);
  });

  it("keeps the embedded database in DATA_DIR unless DATABASE_URL names another", () => {
    expect(loadConfig({ DATA_DIR: "/var/lib/mailroom" }).databaseUrl).toBe("sqlite:/var/lib/mailroom/mailroom.db");
    expect(loadConfig({ DATA_DIR: "/var/lib/mailroom/" }).databaseUrl).toBe("sqlite:/var/lib/mailroom/mailroom.db");
    expect(loadConfig({ DATA_DIR: "/var/lib/mailroom", DATABASE_URL: "sqlite:/srv/mail.db" }).databaseUrl).toBe("sqlite:/srv/mail.db");
  });

  it("takes a blank setting, empty or spaces only (compose's VAR=${VAR} of an unset VAR), as unset", () => {
    const config = loadConfig({ PORT: "", SHUTDOWN_GRACE_MS: " ", RETRY_MIN_SECONDS: "", DATA_DIR: "\t", DATABASE_URL: " " });
    expect(config.port).toBe(3000);
    expect(config.shutdownGraceMs).toBe(10000);
    expect(config.delivery.retryMinSeconds).toBe(300);
    expect(config.databaseUrl).toBe("sqlite:./data/mailroom.db");
    const blank = Object.fromEntries(Object.values(SETTINGS).map((setting) => [setting.env, " "]));
    expect(loadConfig(blank)).toEqual(loadConfig({}));
  });

  it("refuses a DATABASE_URL or SMTP_RELAY_URL that does not parse, naming it and what is wrong but never repeating its password", () => {
    const secretKey = "ab".repeat(32);
    const refused: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ DATABASE_URL: "mysql://app:hunter2#x@db.internal/mailroom", SECRET_KEY: secretKey }, /DATABASE_URL is not a valid URL \(a password with #, \/ or \? must be percent-encoded\)/],
      // Parses, but as the host "app" on port 2024 with the rest a fragment.
      [{ DATABASE_URL: "mysql://app:2024#hunter2@db.internal/mailroom", SECRET_KEY: secretKey }, /DATABASE_URL .*a password with # must be percent-encoded as %23/],
      [{ DATABASE_URL: "mariadb://app:hunter2%@db.internal/mailroom", SECRET_KEY: secretKey }, /DATABASE_URL .*password with % must be percent-encoded as %25/],
      [{ DELIVERY_TRANSPORT: "relay", SMTP_RELAY_URL: "smtp://mailer:hunter2#x@relay.example:587" }, /SMTP_RELAY_URL is not a valid URL/],
      [{ DELIVERY_TRANSPORT: "relay", SMTP_RELAY_URL: "smtps://mailer:1/hunter2@relay.example" }, /SMTP_RELAY_URL .*a password with \/ or \? must be percent-encoded/],
    ];
    for (const [env, reason] of refused) {
      const message = (() => {
        try {
          loadConfig(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          return (error as Error).message;
        }
        return "loaded";
      })();
      expect(message, JSON.stringify(env)).toMatch(reason);
      expect(message).not.toContain("hunter2");
    }
    // An @ in a password needs no encoding: the last @ ends the credentials.
    expect(loadConfig({ DATABASE_URL: "mysql://app:p@ss@db.internal/mailroom", SECRET_KEY: secretKey }).databaseUrl).toBe("mysql://app:p@ss@db.internal/mailroom");
    expect(loadConfig({ DELIVERY_TRANSPORT: "relay", SMTP_RELAY_URL: "smtp://mailer:p%23ss@relay.example:587" }).delivery.relayUrl).toBe("smtp://mailer:p%23ss@relay.example:587");
  });

  it("holds at most 256 MiB of fetched attachment bytes a process by default, and refuses less than one request may fetch", () => {
    expect(loadConfig({}).attachments).toMatchObject({ fetchMaxBytes: 10 * 1024 * 1024, fetchMaxBytesInHand: 256 * 1024 * 1024 });
    expect(loadConfig({ ATTACHMENT_FETCH_MAX_BYTES_IN_HAND: String(10 * 1024 * 1024) }).attachments.fetchMaxBytesInHand).toBe(10 * 1024 * 1024);
    expect(() => loadConfig({ ATTACHMENT_FETCH_MAX_BYTES_IN_HAND: String(1024 * 1024) })).toThrow(/ATTACHMENT_FETCH_MAX_BYTES_IN_HAND must be at least ATTACHMENT_FETCH_MAX_BYTES/);
  });

  it("refuses a retry schedule that would hammer a deferring destination: RETRY_MIN_SECONDS at least 60, RETRY_MAX_SECONDS at least it", () => {
    expect(loadConfig({ RETRY_MIN_SECONDS: "60", RETRY_MAX_SECONDS: "60" }).delivery).toMatchObject({ retryMinSeconds: 60, retryMaxSeconds: 60 });
    for (const bad of ["0", "1", "59", "-300"]) {
      expect(() => loadConfig({ RETRY_MIN_SECONDS: bad }), bad).toThrow(/RETRY_MIN_SECONDS=.* must be an integer in \[60, /);
      expect(() => loadConfig({ RETRY_MAX_SECONDS: bad }), bad).toThrow(/RETRY_MAX_SECONDS=.* must be an integer in \[60, /);
    }
    expect(() => loadConfig({ RETRY_MIN_SECONDS: "600", RETRY_MAX_SECONDS: "300" })).toThrow(/RETRY_MAX_SECONDS must be at least RETRY_MIN_SECONDS/);
  });

  it("refuses a SHUTDOWN_GRACE_MS under a second, which would end every drain at once with exit 1", () => {
    expect(loadConfig({ SHUTDOWN_GRACE_MS: "1000" }).shutdownGraceMs).toBe(1000);
    for (const bad of ["0", "999", "-1"]) expect(() => loadConfig({ SHUTDOWN_GRACE_MS: bad }), bad).toThrow(/SHUTDOWN_GRACE_MS=.* must be an integer in \[1000, /);
  });

  it("requires a shared SECRET_KEY with MySQL", () => {
    expect(() => loadConfig({ DATABASE_URL: "mysql://u:p@127.0.0.1/db" })).toThrow(/SECRET_KEY/);
    expect(loadConfig({ DATABASE_URL: "mysql://u:p@127.0.0.1/db", SECRET_KEY: "ab".repeat(32) }).secretKey).toBe("ab".repeat(32));
  });
});

describe("sendingHostnameWarning", () => {
  const mysql = { DATABASE_URL: "mysql://u:p@127.0.0.1/db", SECRET_KEY: "ab".repeat(32) };
  it("warns a node sharing a MySQL database that relies on its machine's host name", () => {
    expect(sendingHostnameWarning(loadConfig(mysql), mysql)).toMatch(/SENDING_HOSTNAME is not set.*same SENDING_HOSTNAME/);
  });

  it("says nothing when SENDING_HOSTNAME is set, or with the embedded SQLite database (one node)", () => {
    const named = { ...mysql, SENDING_HOSTNAME: "mta1.mail.example.com" };
    expect(sendingHostnameWarning(loadConfig(named), named)).toBeNull();
    expect(sendingHostnameWarning(loadConfig({}), {})).toBeNull();
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, SETTINGS } from "../../src/config.js";

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

  it("takes the keys SECRET_KEY replaced from SECRET_KEY_PREVIOUS, newest first, only beside a new SECRET_KEY", () => {
    const [a, b, c] = ["aa", "bb", "cc"].map((pair) => pair.repeat(32)) as [string, string, string];
    expect(loadConfig({}).secretKeyPrevious).toEqual([]);
    expect(loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: ` ${b}, ${c} ` }).secretKeyPrevious).toEqual([b, c]);
    expect(() => loadConfig({ SECRET_KEY_PREVIOUS: b })).toThrow(/SECRET_KEY_PREVIOUS needs SECRET_KEY/);
    expect(() => loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: "abc" })).toThrow(/SECRET_KEY_PREVIOUS must be 64-hex-character keys/);
    expect(() => loadConfig({ SECRET_KEY: a, SECRET_KEY_PREVIOUS: `${b},${a.toUpperCase()}` })).toThrow(/must not list SECRET_KEY itself/);
  });

  it("requires a shared SECRET_KEY with MySQL", () => {
    expect(() => loadConfig({ DATABASE_URL: "mysql://u:p@127.0.0.1/db" })).toThrow(/SECRET_KEY/);
    expect(loadConfig({ DATABASE_URL: "mysql://u:p@127.0.0.1/db", SECRET_KEY: "ab".repeat(32) }).secretKey).toBe("ab".repeat(32));
  });
});

import { describe, expect, it } from "vitest";
import { ServerClock } from "../../dashboard/src/api/server-clock.js";

/**
 * The dashboard's reading of the server's clock (dashboard/src/api/server-clock.ts), from the
 * `Date` header of every answer, whatever the browser's own clock says.
 */
const answer = (date?: string) => new Response(null, { status: 204, headers: date === undefined ? {} : { date } });

/** A ServerClock over a browser clock the test sets. */
function clocks(browserAt: number) {
  const browser = { now: browserAt };
  return { browser, server: new ServerClock(() => browser.now) };
}

describe("ServerClock", () => {
  it("reads the browser's clock until an answer has come", () => {
    const { server } = clocks(Date.parse("2030-05-01T09:00:00.000Z"));
    expect(server.now()).toBe(Date.parse("2030-05-01T09:00:00.000Z"));
  });

  it("keeps the server's lead over a slow browser clock as its time goes on", () => {
    const { browser, server } = clocks(Date.parse("2030-05-01T08:00:00.250Z"));
    server.observe(answer("Wed, 01 May 2030 09:00:00 GMT"));
    expect(server.now()).toBe(Date.parse("2030-05-01T09:00:00.000Z"));
    browser.now += 5_000;
    expect(server.now()).toBe(Date.parse("2030-05-01T09:00:05.000Z"));
  });

  it("follows the latest answer, so a browser clock set right meanwhile is followed", () => {
    const { browser, server } = clocks(Date.parse("2030-05-01T10:00:00.000Z"));
    server.observe(answer("Wed, 01 May 2030 09:00:00 GMT"));
    browser.now = Date.parse("2030-05-01T09:00:10.000Z");
    server.observe(answer("Wed, 01 May 2030 09:00:10 GMT"));
    expect(server.now()).toBe(Date.parse("2030-05-01T09:00:10.000Z"));
  });

  it("keeps what it had from an answer without a readable Date", () => {
    const { server } = clocks(Date.parse("2030-05-01T08:00:00.000Z"));
    server.observe(answer("Wed, 01 May 2030 09:00:00 GMT"));
    server.observe(answer());
    server.observe(answer("yesterday"));
    expect(server.now()).toBe(Date.parse("2030-05-01T09:00:00.000Z"));
  });
});

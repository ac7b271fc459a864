/**
 * The server's clock, as far as the page can tell. The browser's own may be off (minutes, or
 * hours when set by hand), so what the server decides by its clock, such as a scheduled message
 * falling due, is judged by the server's. Its answers carry its time in their `Date` header (RFC
 * 9110 §6.6.1): the page keeps how far that was from the browser's clock when the latest answer
 * arrived (the latest, so that a browser clock set right meanwhile is followed).
 */
export class ServerClock {
  // Until an answer has come, the browser's clock is all there is.
  #offsetMs = 0;

  constructor(private readonly browserNow: () => number = () => Date.now()) {}

  /** Notes the server's time from `response`, which has just arrived. */
  observe(response: Response): void {
    const date = Date.parse(response.headers.get("date") ?? "");
    // Whole seconds, written before the answer left: the server's clock read at least that when
    // it arrived. So a moment judged by this comes up to a second (and the answer's journey)
    // late, never early.
    if (!Number.isNaN(date)) this.#offsetMs = date - this.browserNow();
  }

  /** The server's time now, in epoch milliseconds. */
  now(): number {
    return this.browserNow() + this.#offsetMs;
  }
}

/**
 * The page's one reading of the server's clock, from the answers of the dashboard's `/auth`
 * routes (auth/auth-api.ts): the session as the page loads, then every token exchange, at least
 * one every 10 minutes of use, which is often enough: a clock keeps its offset over minutes. A
 * `/v1` answer's headers are seen only by a call that asks for them (`withResponse()`), and the
 * dashboard gives the SDK no `fetch` of its own (only the auth module calls fetch).
 */
export const serverClock = new ServerClock();

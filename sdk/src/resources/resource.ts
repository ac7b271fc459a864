import type { Mailroom } from "../client.js";

/** A group of operations that share a contract tag: `mr.messages`, `mr.apiKeys`, … */
export abstract class Resource {
  constructor(protected readonly client: Mailroom) {}
}

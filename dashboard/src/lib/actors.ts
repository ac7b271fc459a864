import type { Actor } from "mailroom";

/** Members' email addresses by their user ids (from listMembers). */
export type MemberEmails = ReadonlyMap<string, string>;

/** API keys' names by their ids (from listApiKeys). */
export type KeyNames = ReadonlyMap<string, string>;

/**
 * Who did something, as a page shows it: "Member" or "API key", and a member's address or a key's
 * name where the page knows them, else the id (a former member, a key on another page). The pages
 * show the id beside a name too, in words, for what quotes it (the API's `actor_id` filter, a
 * support request).
 */
export function describeActor(actor: Actor, emails: MemberEmails, keyNames: KeyNames = new Map()): { kind: string; name: string } {
  return actor.type === "user" ? { kind: "Member", name: emails.get(actor.id) ?? actor.id } : { kind: "API key", name: keyNames.get(actor.id) ?? actor.id };
}

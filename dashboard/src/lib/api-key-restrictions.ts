import { APIError, type ApiKeyRestrictions } from "mailroom";

export type RestrictionField = keyof ApiKeyRestrictions;

const RESTRICTION_FIELDS: readonly string[] = ["allowed_ips", "sender_domains", "recipient_domains"] satisfies RestrictionField[];

/** A form control's name that is one of the restrictions. */
export function isRestrictionField(name: string): name is RestrictionField {
  return RESTRICTION_FIELDS.includes(name);
}

/**
 * The entries of a restriction's textarea: split on commas and line breaks, trimmed, empties
 * dropped, each once (the contract's lists are `uniqueItems`, so a repeat would be refused).
 */
export function parseList(text: string): string[] {
  return [...new Set(text.split(/[,\n]/).map((entry) => entry.trim()))].filter((entry) => entry !== "");
}

/** A restriction as typed: its entries, or null (no limit) when there are none. */
export function listOrNull(text: string): string[] | null {
  const entries = parseList(text);
  return entries.length === 0 ? null : entries;
}

/** createApiKey's restrictions: only the limits set, as one left out is none; undefined when none is. */
export function givenRestrictions(restrictions: ApiKeyRestrictions): Partial<ApiKeyRestrictions> | undefined {
  const given = Object.entries(restrictions).filter(([, list]) => list !== null);
  return given.length === 0 ? undefined : Object.fromEntries(given);
}

/** A restriction's entries as its textarea shows them, one a line; empty for no limit. */
export function listText(list: readonly string[] | null): string {
  return list?.join("\n") ?? "";
}

/**
 * One line for the key list: "Only from 203.0.113.0/24 · Sends from acme.example · to anyone".
 * The domains come as a pair once either is set, so that the open side reads as open rather than
 * as forgotten. Null for a key without restrictions.
 */
export function describeRestrictions({ allowed_ips, sender_domains, recipient_domains }: ApiKeyRestrictions): string | null {
  const parts: string[] = [];
  if (allowed_ips !== null) parts.push(`Only from ${allowed_ips.join(", ")}`);
  if (sender_domains !== null || recipient_domains !== null) {
    parts.push(`${parts.length === 0 ? "Sends" : "sends"} from ${sender_domains?.join(", ") ?? "any domain"}`);
    parts.push(`to ${recipient_domains?.join(", ") ?? "anyone"}`);
  }
  return parts.length === 0 ? null : parts.join(" · ");
}

/**
 * What a 422 says about one restriction (pointers `/restrictions/<field>` and
 * `/restrictions/<field>/<i>`), to show beside its field. An entry's problem is led by the entry
 * as it was sent (`sent`), unless the message quotes it already, so that the person can find it
 * among the others.
 */
export function restrictionProblems(error: unknown, field: RestrictionField, sent: readonly string[] | null = null): string[] {
  if (!(error instanceof APIError) || error.status !== 422) return [];
  const base = `/restrictions/${field}`;
  return error.errors.flatMap(({ pointer, message }) => {
    if (pointer === base) return [message];
    const index = pointer.startsWith(`${base}/`) ? pointer.slice(base.length + 1) : "";
    if (!/^\d+$/.test(index)) return [];
    const entry = sent?.[Number(index)];
    return [entry === undefined || message.includes(JSON.stringify(entry)) ? message : `${JSON.stringify(entry)} ${message}`];
  });
}

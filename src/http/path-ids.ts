import type { FastifyRequest } from "fastify";
import { NotFoundError } from "../domain/errors.js";
import { isWellFormedId, type IdKind } from "../domain/ids.js";

/** The contract's TemplateSlug. */
const TEMPLATE_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const idOf = (kind: IdKind) => (value: string) => isWellFormedId(value, kind);

/** The path parameters that name a record: what any name of one looks like, and what a 404 calls it (as the services do). */
const PATH_NAMES: Readonly<Record<string, { wellFormed: (value: string) => boolean; resource: string }>> = {
  message_id: { wellFormed: idOf("message"), resource: "message" },
  inbound_id: { wellFormed: idOf("inbound"), resource: "inbound message" },
  api_key_id: { wellFormed: idOf("apiKey"), resource: "API key" },
  domain_id: { wellFormed: idOf("domain"), resource: "domain" },
  suppression_id: { wellFormed: idOf("suppression"), resource: "suppression" },
  template: { wellFormed: (value) => isWellFormedId(value, "template") || TEMPLATE_SLUG.test(value), resource: "template" },
  webhook_id: { wellFormed: idOf("webhookEndpoint"), resource: "webhook" },
  user_id: { wellFormed: idOf("user"), resource: "member" },
  invitation_id: { wellFormed: idOf("invitation"), resource: "pending invitation" },
};

/**
 * A path id (or template slug) that no record could have is a 404 before any query. Not only
 * quicker: MySQL's binary collations pad, comparing `msg_…` followed by spaces equal to `msg_…`,
 * so such an id would find another id's row on MySQL and not on SQLite, and code keyed by the id
 * as given would miss it. After authentication (a stranger still gets 401) and validation (an
 * over-long id stays 422).
 */
export async function refuseMalformedPathIds(req: FastifyRequest): Promise<void> {
  for (const [name, value] of Object.entries(req.params as Record<string, unknown>)) {
    const known = PATH_NAMES[name];
    if (known !== undefined && typeof value === "string" && !known.wellFormed(value)) throw new NotFoundError(known.resource, value);
  }
}

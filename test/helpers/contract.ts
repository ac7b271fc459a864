import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { loadSpec } from "../../src/http/spec.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;

/**
 * Checks real responses against openapi/v1.yaml: the status is declared for the operation, the
 * content type is the declared one, and the body validates against the declared schema.
 */
export class ContractChecker {
  private readonly spec = loadSpec() as unknown as Json;
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    this.ajv.addSchema(this.spec, "openapi");
  }

  /** Problems with the response, or [] when it honours the contract. */
  check(method: string, specPath: string, status: number, contentType: string | undefined, body: string): string[] {
    const responsesPointer = `/paths/${escape(specPath)}/${method.toLowerCase()}/responses`;
    const responses = this.at(responsesPointer) as Json | undefined;
    if (!responses) return [`${method} ${specPath} is not in the contract`];
    const key = String(status) in responses ? String(status) : `${String(status)[0]}XX` in responses ? `${String(status)[0]}XX` : "default" in responses ? "default" : null;
    if (key === null) return [`${method} ${specPath} does not declare status ${status}`];
    let pointer = `${responsesPointer}/${key}`;
    let response = this.at(pointer) as Json;
    while (typeof response.$ref === "string") {
      pointer = response.$ref.slice(1);
      response = this.at(pointer) as Json;
    }
    const content = response.content as Json | undefined;
    if (!content) return body.length === 0 ? [] : [`status ${status} declares no body but one was sent`];
    const mediaType = (contentType ?? "").split(";")[0]!.trim();
    if (!(mediaType in content)) return [`content type ${mediaType} is not declared for status ${status} (declared: ${Object.keys(content).join(", ")})`];
    // A binary body (an attachment download) has nothing for a JSON schema to check beyond its media type.
    if (!/^application\/(.+\+)?json$/.test(mediaType)) return [];
    return this.validate(`${pointer}/content/${escape(mediaType)}/schema`, body);
  }

  /** Problems with a webhook's JSON body of `type`, or [] when it is the contract's payload for that type (`webhooks:`). */
  checkWebhook(type: string, body: string): string[] {
    const pointer = `/webhooks/${escape(type)}/post/requestBody/content/application~1json/schema`;
    if (this.at(pointer) === undefined) return [`the webhook ${type} is not in the contract`];
    return this.validate(pointer, body);
  }

  private validate(schemaPointer: string, body: string): string[] {
    let validate = this.cache.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#${schemaPointer}` });
      this.cache.set(schemaPointer, validate);
    }
    return validate(JSON.parse(body)) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  private at(pointer: string): unknown {
    return jsonPointer(this.spec, pointer);
  }
}

/** The node at an RFC 6901 JSON pointer (`/paths/~1v1~1messages/post`), or undefined. */
export function jsonPointer(document: unknown, pointer: string): unknown {
  return pointer
    .split("/")
    .slice(1)
    .reduce<unknown>((node, segment) => (node as Json | undefined)?.[segment.replace(/~1/g, "/").replace(/~0/g, "~")], document);
}

const escape = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/** One operation of the contract, with the names its doors derive from it (STYLE.md). */
export interface ContractOperation {
  operationId: string;
  tag: string;
  samples: Array<{ label: string; source: string }>;
  /** The names of its query parameters (the filters and paging of a list). */
  query: string[];
  /** Whether it takes a request body. */
  body: boolean;
}

type Parameter = { name?: string; in?: string; $ref?: string };

export function contractOperations(): ContractOperation[] {
  const spec = loadSpec();
  const resolve = (parameter: Parameter) => (parameter.$ref ? (jsonPointer(spec, parameter.$ref.slice(1)) as Parameter) : parameter);
  return Object.values(spec.paths).flatMap((item) =>
    Object.values(item as Record<string, { operationId?: string; tags?: string[]; parameters?: Parameter[]; requestBody?: unknown; "x-codeSamples"?: ContractOperation["samples"] }>)
      .filter((operation) => typeof operation === "object" && operation?.operationId)
      .map((operation) => ({
        operationId: operation.operationId as string,
        tag: (operation.tags ?? [])[0] as string,
        samples: operation["x-codeSamples"] ?? [],
        query: (operation.parameters ?? []).map(resolve).flatMap((parameter) => (parameter.in === "query" && parameter.name ? [parameter.name] : [])),
        body: operation.requestBody !== undefined,
      })),
  );
}

/** `ApiKeys` -> `apiKeys` (the SDK resource). */
/** `message.bounced` -> `MessageBouncedEventData`: the contract's schema of that type's `data`. */
export const eventDataSchemaName = (type: string): string => `${type.split(/[._]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")}EventData`;

export const resourceOf = (tag: string) => tag[0]!.toLowerCase() + tag.slice(1);

/**
 * The SDK method: the operationId without its tag's noun (`listMessageEvents` -> `listEvents`).
 * A tag named for where its objects come from rather than for the objects (`Inbound`, whose
 * objects are inbound messages) drops their whole noun: `getInboundMessage` -> `get`, as
 * `getWorkspace` -> `get`.
 */
export function methodOf(operationId: string, tag: string): string {
  const singular = tag.endsWith("s") ? tag.slice(0, -1) : tag;
  const objectNoun = new RegExp(`^([a-z]+)${tag}Message$`).exec(operationId);
  if (objectNoun) return objectNoun[1]!;
  const name = operationId.includes(tag) ? operationId.replace(tag, "") : operationId.replace(singular, "");
  return name[0]!.toLowerCase() + name.slice(1);
}

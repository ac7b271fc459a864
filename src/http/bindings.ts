import { isRole, type Role } from "../domain/roles.js";

/**
 * Boot-time agreement between the contract and the code (DESIGN.md §1). fastify-openapi-glue
 * would otherwise answer 500 at request time for an operation without a handler, and leave a
 * route open when a security scheme has no handler.
 */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject | unknown>>;
  security?: Array<Record<string, string[]>>;
  components?: { securitySchemes?: Record<string, unknown>; schemas?: Record<string, unknown> };
}

interface OperationObject {
  operationId?: string;
  "x-mailroom-role"?: unknown;
  security?: Array<Record<string, string[]>>;
  requestBody?: { required?: boolean };
}

export const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

export interface OperationInfo {
  operationId: string;
  method: string;
  path: string;
  /** Security requirements in force (operation-level or the document default); [] = public. */
  security: Array<Record<string, string[]>>;
  /** Whether the operation takes a request body, and whether it must be sent. */
  body: "required" | "optional" | "none";
  /** The least member role a user access token needs (`x-mailroom-role`); null when undeclared. */
  minRole: Role | null;
}

export function operationsOf(spec: OpenApiDocument): OperationInfo[] {
  const out: OperationInfo[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method] as OperationObject | undefined;
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const body = op.requestBody === undefined ? "none" : op.requestBody.required ? "required" : "optional";
      const minRole = isRole(op["x-mailroom-role"]) ? op["x-mailroom-role"] : null;
      out.push({ operationId: op.operationId, method, path, security: op.security ?? spec.security ?? [], body, minRole });
    }
  }
  return out;
}

export function checkBindings(spec: OpenApiDocument, handlers: object, securityHandlers: object): void {
  const problems: string[] = [];
  const operations = operationsOf(spec);
  const ids = new Set(operations.map((o) => o.operationId));
  for (const id of ids) if (typeof (handlers as Record<string, unknown>)[id] !== "function") problems.push(`operation ${id} has no handler`);
  for (const name of Object.keys(handlers)) if (!ids.has(name)) problems.push(`handler ${name} matches no operation in the contract`);
  const schemes = new Set(Object.keys(spec.components?.securitySchemes ?? {}));
  for (const op of operations) for (const requirement of op.security) for (const scheme of Object.keys(requirement)) schemes.add(scheme);
  // A secured operation without a role would be open to every member, or to none: refuse to guess.
  for (const op of operations) if (op.security.length > 0 && op.minRole === null) problems.push(`operation ${op.operationId} declares no valid x-mailroom-role`);
  for (const scheme of schemes) if (typeof (securityHandlers as Record<string, unknown>)[scheme] !== "function") problems.push(`security scheme ${scheme} has no security handler`);
  if (problems.length > 0) throw new Error(`the contract and the handlers disagree: ${problems.join("; ")}`);
}

import { METHODS, type OpenApiDocument } from "./bindings.js";

interface PathMethods {
  pattern: RegExp;
  methods: string[];
}

const escaped = (literal: string) => literal.replace(/[.*+?^$()|[\]\\]/g, "\\$&");

/**
 * The methods a concrete path has, or null when no route matches: the difference between 405
 * Method Not Allowed (with Allow, RFC 9110 §15.5.6) and 404 Not Found. The contract's paths
 * come first; then the routes registered outside it (the dashboard's /auth/*, tracking links,
 * the dashboard's files), as Fastify's onRoute hook reports them. HEAD goes with every GET and
 * is not listed, as the contract does not list it.
 */
export class AllowedMethods {
  private readonly contract: PathMethods[];
  private readonly registered = new Map<string, PathMethods>();

  constructor(spec: OpenApiDocument) {
    this.contract = Object.entries(spec.paths).map(([template, item]) => ({
      pattern: new RegExp(`^${escaped(template).replace(/\{[^}]+\}/g, "[^/]+")}$`),
      methods: METHODS.filter((method) => method in (item as object)).map((method) => method.toUpperCase()),
    }));
  }

  /** A Fastify route: `:name` is one segment, a trailing `*` anything. */
  addRoute(url: string, method: string | string[]): void {
    const methods = (Array.isArray(method) ? method : [method]).map((m) => m.toUpperCase()).filter((m) => m !== "HEAD");
    if (methods.length === 0) return;
    const known = this.registered.get(url);
    if (known) {
      known.methods = [...new Set([...known.methods, ...methods])];
      return;
    }
    const pattern = escaped(url).replace(/:[^/]+/g, "[^/]+").replace(/\\\*$/, ".*");
    this.registered.set(url, { pattern: new RegExp(`^${pattern}$`), methods });
  }

  of(path: string): string[] | null {
    const found = this.contract.find((p) => p.pattern.test(path)) ?? [...this.registered.values()].find((p) => p.pattern.test(path));
    return found?.methods ?? null;
  }
}

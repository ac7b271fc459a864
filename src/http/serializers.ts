import SerializerSelector from "@fastify/fast-json-stringify-compiler";

type RouteDefinition = Parameters<ReturnType<ReturnType<typeof SerializerSelector>>>[0];
type Serializer = ReturnType<ReturnType<ReturnType<typeof SerializerSelector>>>;

/** Fastify's own response serializer compiler (fast-json-stringify), with no shared schemas: the app adds none. */
const compileSerializer = SerializerSelector()({}, {});

/**
 * Compiled response serializers by schema, kept for the process, as the validators are
 * (src/http/validation.ts): a serializer is a pure function of its schema, and building the
 * contract's several hundred took half of every app's start, which tests pay once per test.
 */
const compiled = new Map<string, Serializer>();

export function serializerCompiler(route: Omit<RouteDefinition, "httpStatus"> & { httpStatus?: string | undefined }): Serializer {
  const key = JSON.stringify(route.schema);
  let serialize = compiled.get(key);
  if (!serialize) {
    serialize = compileSerializer(route as RouteDefinition);
    compiled.set(key, serialize);
  }
  return serialize;
}

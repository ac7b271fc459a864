/**
 * Where to go after signing in: the `next` the sign-in page was sent with, if it is a path on
 * this site. Anything else (`//evil.example`, `https://…`) would make the page an open redirect.
 */
export function nextPath(search: string): string {
  const next = new URLSearchParams(search).get("next");
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

/** The sign-in path that comes back to `path` afterwards. */
export function signInPath(path: string): string {
  return path === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(path)}`;
}

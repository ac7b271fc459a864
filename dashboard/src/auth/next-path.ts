/**
 * Where to go after signing in: the `next` the sign-in page was sent with, if it is a path on
 * this site (`origin`, the page's own). Anything else (`//evil.example`, `https://…`) would make
 * the page an open redirect. Checked the way the browser will read it, by resolving it with the
 * URL parser, rather than by its first characters: the parser drops tabs and newlines anywhere
 * and reads `\` as `/`, so `/\t/evil.example` is `//evil.example` to it.
 */
export function nextPath(search: string, origin: string): string {
  const next = new URLSearchParams(search).get("next");
  if (!next) return "/";
  const path = sameOriginPath(next, origin);
  // The path is followed once more (the redirect resolves it against this page): a pathname that
  // the parser normalised into `//host` (`/a/../..//evil.example`) would leave the origin then.
  return path !== null && sameOriginPath(path, origin) === path ? path : "/";
}

/** `target` resolved against `origin`, as path, query and fragment when it stays there, else null. */
function sameOriginPath(target: string, origin: string): string | null {
  let url: URL;
  try {
    url = new URL(target, origin);
  } catch {
    return null;
  }
  return url.origin === origin ? `${url.pathname}${url.search}${url.hash}` : null;
}

/** The sign-in path that comes back to `path` afterwards. */
export function signInPath(path: string): string {
  return path === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(path)}`;
}

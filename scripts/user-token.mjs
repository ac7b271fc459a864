#!/usr/bin/env node
/* global process, console, fetch */
// Prints a user access token (mru_test_…) for scripts and the fuzzer: signs up through the
// dashboard's /auth routes as a browser would (CSRF cookie and header, session cookie), then
// exchanges the session for a sandbox token of the user's first workspace.
//   node scripts/user-token.mjs BASE_URL EMAIL PASSWORD [sign-up|sign-in]
const [base, email, password, mode = "sign-up"] = process.argv.slice(2);
if (!base || !email || !password) {
  console.error("usage: node scripts/user-token.mjs BASE_URL EMAIL PASSWORD [sign-up|sign-in]");
  process.exit(2);
}
const jar = new Map();
async function call(method, path, body) {
  const headers = { origin: base, cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
  if (body !== undefined) Object.assign(headers, { "content-type": "application/json", "x-csrf-token": jar.csrfToken ?? "" });
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  for (const cookie of res.headers.getSetCookie()) {
    const [pair] = cookie.split(";");
    const at = pair.indexOf("=");
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.code}: ${json.detail}`);
  return json;
}
const session = await call("GET", "/auth/session");
jar.csrfToken = session.csrf_token;
const account = await call("POST", `/auth/${mode}`, { email, password });
jar.csrfToken = account.csrf_token;
const { token } = await call("POST", "/auth/token", { workspace_id: account.workspaces[0].id, environment: "sandbox" });
console.log(token);

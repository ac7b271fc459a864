import { Link } from "wouter";
import type { Environment } from "../lib/environment";
import { Card } from "./card";
import { CopyButton } from "./copy-button";
import { Tabs } from "./tabs";

const TABS = [
  { id: "curl", label: "curl" },
  { id: "sdk", label: "Node SDK" },
  { id: "cli", label: "CLI" },
] as const;

type Snippet = (typeof TABS)[number]["id"];

// In the sandbox, the simulator's address shows a delivery without sending anything
// (docs/sandbox.md); in live, the reader's own address is the honest example.
function recipientFor(environment: Environment): string {
  return environment === "sandbox" ? "delivered@simulator.test" : "you@example.com";
}

function snippet(kind: Snippet, baseUrl: string, to: string): string {
  const from = "Acme <hello@acme.example>";
  const subject = "Hello from Mailroom";
  const html = "<p>It works!</p>";
  switch (kind) {
    case "curl":
      return [
        `curl ${baseUrl}/v1/messages \\`,
        `  -H "Authorization: Bearer $MAILROOM_API_KEY" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '${JSON.stringify({ from, to, subject, html }, null, 2)}'`,
      ].join("\n");
    case "sdk":
      return [
        `import { Mailroom } from "mailroom";`,
        ``,
        `const mr = new Mailroom({ apiKey: process.env.MAILROOM_API_KEY, baseUrl: "${baseUrl}" });`,
        ``,
        `const message = await mr.messages.create({`,
        `  from: ${JSON.stringify(from)},`,
        `  to: ${JSON.stringify(to)},`,
        `  subject: ${JSON.stringify(subject)},`,
        `  html: ${JSON.stringify(html)},`,
        `});`,
        `console.log(message.id, message.status);`,
      ].join("\n");
    case "cli":
      return [
        `# The CLI reads the key from $MAILROOM_API_KEY and the server from $MAILROOM_BASE_URL.`,
        `export MAILROOM_BASE_URL=${baseUrl}`,
        ``,
        `npx mailroom send --from "${from}" --to ${to} \\`,
        `  --subject "${subject}" --html "${html}"`,
      ].join("\n");
  }
}

/**
 * The empty state that teaches: how to send a first message, with this server's address filled in.
 * Only for an environment that has never had a message (not one quiet for the overview's week).
 */
export function GettingStarted({ environment }: { environment: Environment }) {
  const baseUrl = window.location.origin;
  const to = recipientFor(environment);
  return (
    <Card title="Send your first message" className="getting-started">
      <p>
        No messages yet in {environment === "sandbox" ? "the sandbox" : "live"}. Create an API key, put it in <code>MAILROOM_API_KEY</code>, and send
        one from your code or a terminal.
        {environment === "sandbox" && " Sandbox messages are rendered and kept, never delivered."}
      </p>
      <p>
        {/* Opens the API keys page with its Create API key dialog open. */}
        <Link href="/developers/api-keys?create" className="button button--primary">
          Create an API key
        </Link>
      </p>
      <Tabs label="Ways to send" tabs={TABS}>
        {(kind) => {
          const code = snippet(kind, baseUrl, to);
          return (
            <div className="snippet">
              <pre>
                <code>{code}</code>
              </pre>
              <CopyButton text={code} label="Copy snippet" />
            </div>
          );
        }}
      </Tabs>
    </Card>
  );
}

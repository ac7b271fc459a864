import { useMemo, useState } from "react";
import { emailDocument, hasRemoteImages } from "../lib/email-document";
import { Tabs } from "./tabs";

interface EmailPreviewProps {
  html: string | null;
  text: string | null;
  /** The whole message as sent; leave it out where there is none (a template's preview). */
  mime?: string | null;
}

const TABS = [
  { id: "html", label: "HTML" },
  { id: "text", label: "Text" },
  { id: "mime", label: "Raw MIME" },
] as const;

/**
 * A rendered email, safe to look at: the HTML in an iframe with an empty `sandbox` (no scripts,
 * not same-origin, so it can reach neither the page nor its token) and a CSP that blocks every
 * request until the user chooses to load remote images. Used by the message page and the inbox;
 * give it a `key` per message so that choice is not carried over to the next one.
 */
export function EmailPreview({ html, text, mime }: EmailPreviewProps) {
  const [remoteImages, setRemoteImages] = useState(false);
  const tabs = mime === undefined ? TABS.filter((tab) => tab.id !== "mime") : TABS;
  const document = useMemo(() => (html === null ? null : emailDocument(html, { remoteImages })), [html, remoteImages]);
  // The notice and its button only where there is a remote image to block or load.
  const remote = useMemo(() => html !== null && hasRemoteImages(html), [html]);

  return (
    <div className="email-preview" data-testid="email-preview">
      <Tabs label="Message content" tabs={tabs} initial={html === null ? "text" : "html"}>
        {(tab) => {
          if (tab === "html") {
            if (document === null) return <p className="muted">This message has no HTML part.</p>;
            return (
              <>
                {(remote || remoteImages) && (
                  <div className="email-preview__privacy">
                    {remoteImages ? (
                      <>
                        <p>Remote images are loaded. The sender can see that this message was opened, when, and from which address.</p>
                        <button type="button" className="button button--small" onClick={() => setRemoteImages(false)}>
                          Block remote images
                        </button>
                      </>
                    ) : (
                      <>
                        <p>
                          Remote images are blocked. Images loaded from other servers can tell the sender when and where this message was opened
                          (tracking pixels).
                        </p>
                        <button type="button" className="button button--small" onClick={() => setRemoteImages(true)}>
                          Load remote images
                        </button>
                      </>
                    )}
                  </div>
                )}
                <iframe
                  // A new frame per policy: a frame's CSP is fixed when its document loads.
                  key={remoteImages ? "remote" : "blocked"}
                  className="email-preview__frame"
                  title="Email HTML preview"
                  sandbox=""
                  referrerPolicy="no-referrer"
                  srcDoc={document}
                />
              </>
            );
          }
          const body = tab === "text" ? text : (mime ?? null);
          if (body === null)
            return <p className="muted">{tab === "text" ? "This message has no text part." : "No source is kept: the message has not been rendered yet, or its source was too large to keep (it was sent all the same)."}</p>;
          return <pre className="email-preview__source">{body}</pre>;
        }}
      </Tabs>
    </div>
  );
}

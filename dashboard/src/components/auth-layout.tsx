import type { ReactNode } from "react";
import { PageHeader } from "./page-header";

/** The centred card of the signed-out pages (sign-in, sign-up, invitations). */
export function AuthLayout({ title, description, children }: { title: string; description?: ReactNode; children: ReactNode }) {
  return (
    <main className="auth">
      <div className="auth__brand">
        <img src="/favicon.svg" alt="" width="28" height="28" />
        Mailroom
      </div>
      <div className="auth__card">
        <PageHeader title={title} description={description} />
        {children}
      </div>
    </main>
  );
}

import { Fragment, type ReactNode } from "react";
import type { Role } from "mailroom";
import { Link, useLocation } from "wouter";
import { useWorkspace } from "../api/api-context";
import { useAction } from "../api/use-request";
import { useSession } from "../auth/session";
import { REQUEST_LOG_PATH, REQUEST_LOG_ROLE } from "../lib/request-log";
import { hasRole } from "../lib/roles";
import { EnvironmentSwitch, LiveBanner } from "./environment-switch";
import { ErrorState } from "./error-state";
import { WorkspaceSwitcher } from "./workspace-switcher";

interface NavLink {
  href: string;
  label: string;
  /** The least role the page is for: below it the link is not offered (the server would refuse the page's reads). */
  least?: Role;
}

const NAVIGATION: ReadonlyArray<{ section: string | null; links: readonly NavLink[] }> = [
  {
    section: null,
    links: [
      { href: "/", label: "Overview" },
      { href: "/messages", label: "Messages" },
      { href: "/analytics", label: "Analytics" },
      { href: "/templates", label: "Templates" },
      { href: "/inbox", label: "Sandbox inbox" },
      { href: "/suppressions", label: "Suppressions" },
    ],
  },
  {
    section: "Developers",
    links: [
      { href: "/developers/api-keys", label: "API keys" },
      { href: REQUEST_LOG_PATH, label: "Request log", least: REQUEST_LOG_ROLE },
      { href: "/webhooks", label: "Webhooks" },
    ],
  },
  {
    section: null,
    links: [
      { href: "/domains", label: "Domains" },
      { href: "/settings", label: "Settings" },
    ],
  },
];

function isCurrent(location: string, href: string): boolean {
  return href === "/" ? location === "/" : location === href || location.startsWith(`${href}/`);
}

function Sidebar() {
  const [location] = useLocation();
  const { workspace } = useWorkspace();
  return (
    <nav className="sidebar" aria-label="Main">
      {NAVIGATION.map((group, index) => (
        <div key={group.section ?? index} className="sidebar__group">
          {group.section && <p className="sidebar__section">{group.section}</p>}
          <ul>
            {group.links.filter((link) => link.least === undefined || hasRole(workspace.role, link.least)).map((link) => (
              <li key={link.href}>
                <Link href={link.href} className="sidebar__link" aria-current={isCurrent(location, link.href) ? "page" : undefined}>
                  {link.label}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

function UserMenu() {
  const { session, signOut } = useSession();
  const action = useAction(signOut);
  return (
    <div className="user-menu">
      <span className="user-menu__name" title={session.user?.email}>
        {session.user?.name ?? session.user?.email}
      </span>
      <button type="button" className="button button--small" onClick={() => void action.run()} disabled={action.pending}>
        {action.pending ? "Signing out…" : "Sign out"}
      </button>
      {action.error !== undefined && <ErrorState error={action.error} title="Could not sign out" compact />}
    </div>
  );
}

/** The frame of every signed-in page: live banner, top bar, navigation, and the page itself. */
export function AppShell({ children }: { children: ReactNode }) {
  const { workspace, environment } = useWorkspace();
  return (
    <div className={`app app--${environment}`}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <LiveBanner />
      <header className="top-bar">
        <Link href="/" className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          Mailroom
        </Link>
        <WorkspaceSwitcher />
        <EnvironmentSwitch />
        <UserMenu />
      </header>
      <div className="app__body">
        <Sidebar />
        <main id="main" className="main" tabIndex={-1}>
          {/* Keyed by the scope, so that switching workspace or environment starts the page afresh:
              what is typed, opened or shown once in one scope (a form's values, a dialog, a new
              invitation link or key secret) must not stay on screen over the other's data. The top
              bar and the navigation are outside the key, so the switches themselves stay put. */}
          <Fragment key={`${workspace.id}:${environment}`}>{children}</Fragment>
        </main>
      </div>
    </div>
  );
}

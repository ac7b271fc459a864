import type { ReactNode } from "react";
import { Link } from "wouter";
import type { RequestState } from "../api/use-request";
import { Loaded } from "./loaded";
import { PageHeader } from "./page-header";

interface ResourcePageProps<T> {
  /** The list the resource belongs to, linked above the page as "← label". */
  back: { href: string; label: string };
  /** The page's heading until the resource arrives; its view then sets its own. */
  title: string;
  state: Pick<RequestState<T>, "data" | "error" | "reload">;
  /** For the loading and error states: "this domain". */
  what: string;
  children: (data: T) => ReactNode;
}

/** The page of one resource (a message, a domain): a way back to its list, then the resource once loaded. */
export function ResourcePage<T>({ back, title, state, what, children }: ResourcePageProps<T>) {
  return (
    <>
      <Link href={back.href} className="back-link">
        ← {back.label}
      </Link>
      {state.data === undefined && <PageHeader title={title} />}
      <Loaded state={state} what={what}>
        {children}
      </Loaded>
    </>
  );
}

import { Link } from "wouter";
import { PageHeader } from "../components/page-header";

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is nothing at this address. <Link href="/">Go to the overview</Link>.
      </p>
    </>
  );
}

import { useLocation } from "wouter";
import { useWorkspace } from "../api/api-context";
import { ENVIRONMENT_LABELS, pathAfterEnvironmentSwitch } from "../lib/environment";

/**
 * The live / sandbox switch, always in the top bar. A switch named "Live mode", on in live, as in
 * Stripe's dashboard; the badge beside it says which environment every page is showing. On the
 * page of a record that only the environment left has (a message, a webhook endpoint), the switch
 * goes to the list of its kind, in the record's place in the history (Back would lead to "Not found").
 */
export function EnvironmentSwitch() {
  const { environment, setEnvironment } = useWorkspace();
  const [location, navigate] = useLocation();
  const live = environment === "live";
  return (
    <div className="env-switch">
      <span className={`env-badge env-badge--${environment}`} data-testid="env-badge">
        {ENVIRONMENT_LABELS[environment]}
      </span>
      <button
        type="button"
        role="switch"
        aria-checked={live}
        className="switch"
        data-testid="env-switch"
        onClick={() => {
          const list = pathAfterEnvironmentSwitch(location);
          if (list !== null) navigate(list, { replace: true });
          setEnvironment(live ? "sandbox" : "live");
        }}
      >
        <span className="switch__track" aria-hidden="true">
          <span className="switch__thumb" />
        </span>
        Live mode
      </button>
    </div>
  );
}

/** In live, a coloured bar across the top of every page: real email is sent from here. */
export function LiveBanner() {
  const { environment } = useWorkspace();
  if (environment !== "live") return null;
  return (
    <div className="live-banner" data-testid="live-banner" role="note" aria-label="Live mode">
      <strong>Live</strong> You are viewing live data — real email is sent
    </div>
  );
}

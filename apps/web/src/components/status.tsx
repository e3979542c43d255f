/** An error's message as an alert (nothing without one). */
export function ErrorText(props: {
  error: { message: string } | null | undefined;
  prefix?: string;
  className?: string;
}) {
  if (props.error == null) return null;
  return (
    <p role="alert" className={`text-sm text-destructive ${props.className ?? ""}`}>
      {props.prefix}
      {props.error.message}
    </p>
  );
}

/** A list query's loading, error and empty states (nothing once there is data to show). */
export function QueryState(props: {
  query: { isPending: boolean; error: { message: string } | null; data?: { length: number } | undefined };
  empty: string;
  loading?: string;
}) {
  if (props.query.isPending) return <p className="text-sm text-muted-foreground">{props.loading ?? "Loading…"}</p>;
  if (props.query.error !== null) return <ErrorText error={props.query.error} />;
  if (props.query.data?.length === 0) return <p className="text-sm text-muted-foreground">{props.empty}</p>;
  return null;
}

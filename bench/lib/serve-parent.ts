// Child side of a benchmark server: the messages every bench server answers the same way.

/**
 * Answers `cpu` with this process's CPU time and `stop` by calling `stop`; hands any other
 * message to `onMessage`. Also stops when the parent goes away or on SIGTERM.
 */
export function serveParent(options: {
  stop: () => Promise<void>;
  onMessage?: (message: { type: string }) => void;
}): void {
  process.on("message", (raw: unknown) => {
    const message = raw as { type: string };
    if (message.type === "cpu") {
      const usage = process.cpuUsage();
      process.send?.({ type: "cpu", user: usage.user, system: usage.system });
    } else if (message.type === "stop") {
      void options.stop();
    } else {
      options.onMessage?.(message);
    }
  });
  // If the parent goes away, do not linger.
  process.on("disconnect", () => void options.stop());
  process.on("SIGTERM", () => void options.stop());
}

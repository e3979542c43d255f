import type { CapturedMail } from "@prim/mail";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { webEnv } from "@/server/env";

export const metadata: Metadata = { title: "Development mail" };

export const dynamic = "force-dynamic";

/** The text of a mail with its links made clickable. */
function withLinks(text: string): ReactNode[] {
  return text.split(/(https?:\/\/[^\s<>"]+)/g).map((part, i) =>
    /^https?:\/\//.test(part) ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text
      <a key={i} href={part} className="break-all underline">
        {part}
      </a>
    ) : (
      part
    ),
  );
}

/**
 * Development only: the mail `npm run cloud` captured because `SMTP_URL` is unset. Served only
 * when a capture is configured and the dashboard itself is on loopback (`devMailPage`, env.ts);
 * anywhere else it does not exist (404), since it shows every account's links.
 */
export default async function DevMailPage() {
  const env = webEnv();
  if (!env.devMailPage || env.PRIM_MAIL_CAPTURE_URL === undefined) notFound();
  let messages: CapturedMail[] | null = null;
  try {
    const res = await fetch(`${env.PRIM_MAIL_CAPTURE_URL}/messages`, {
      headers: { authorization: `Bearer ${env.PRIM_INTERNAL_SECRET}` },
      cache: "no-store",
    });
    if (res.ok) messages = (await res.json()) as CapturedMail[];
  } catch {
    // shown below
  }
  return (
    <section aria-labelledby="title" className="space-y-4">
      <h1 id="title" className="text-2xl font-semibold">
        Captured mail
      </h1>
      <p className="rounded border border-amber-300 bg-amber-50 p-2 text-sm">
        Development only: <code>SMTP_URL</code> is unset, so <code>npm run cloud</code> keeps the dashboard's mail here
        (newest first) instead of sending it.
      </p>
      {messages === null && (
        <p role="alert" className="text-sm text-red-700">
          The mail capture does not answer.
        </p>
      )}
      {messages?.length === 0 && <p className="text-sm text-zinc-600">No mail yet.</p>}
      <ul className="space-y-3">
        {messages?.map((m) => (
          <li key={m.id} className="rounded-lg border bg-white p-4">
            <h2 className="break-words font-medium">{m.subject}</h2>
            <p className="break-all text-sm text-zinc-600">
              To {m.to.join(", ")} · {new Date(m.receivedAt).toISOString().replace("T", " ").slice(0, 19)} UTC
            </p>
            <p className="mt-2 whitespace-pre-wrap break-words text-sm">{withLinks(m.text)}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

import type { Mail, Mailer } from "@prim/mail";
import { type WebEnv, webEnv } from "./env";
import { primMail } from "./prim";

let mailer: Promise<Mailer | null> | undefined;

/**
 * Sends one message over `SMTP_URL`. Without it the message goes to the log instead (a
 * dashboard started by hand, without `npm run cloud`'s capture): nothing is lost, nothing is
 * sent.
 */
export async function sendMail(mail: Mail): Promise<void> {
  const env = webEnv();
  mailer ??= env.SMTP_URL === undefined ? Promise.resolve(null) : smtp(env, env.SMTP_URL);
  const sender = await mailer;
  if (sender === null) {
    console.log(`prim web: SMTP_URL unset; mail to ${mail.to}: ${mail.subject}\n${mail.text}`);
    return;
  }
  await sender.send(mail);
}

async function smtp(env: WebEnv, url: string): Promise<Mailer> {
  return (await primMail()).createMailer({ url, from: env.PRIM_MAIL_FROM });
}

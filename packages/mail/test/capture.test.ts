// Mail through nodemailer into the local capture, read back as the dashboard's development page
// and the tests read it: subject, text and links intact (long lines, non-ASCII), the viewer API
// closed without the secret.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMailer, type MailCapture, startMailCapture } from "../src/index.js";

const SECRET = "capture-secret-for-the-test";
let capture: MailCapture;
const seen: string[] = [];

beforeAll(async () => {
  capture = await startMailCapture({ secret: SECRET, onMessage: (m) => seen.push(m.subject) });
});

afterAll(async () => {
  await capture?.close();
});

describe("the mail capture", () => {
  it("receives what the mailer sends, with its links whole", async () => {
    const mailer = createMailer({ url: capture.smtpUrl, from: "Prim <no-reply@localhost>" });
    const link = `http://localhost:3000/api/auth/verify-email?token=${"t".repeat(180)}&callbackURL=%2Finvite%2Finv_x`;
    await mailer.send({
      to: "Zoë@Example.test",
      subject: "Confirm your address — Prim",
      text: `Héllo,\n\nconfirm your address:\n${link}\n\nThe link works for 24 hours.`,
    });
    mailer.close();
    const mail = await capture.waitFor((m) => m.subject.startsWith("Confirm"));
    expect(mail.subject).toBe("Confirm your address — Prim");
    expect(mail.to).toEqual(["Zoë@example.test"]); // nodemailer lowercases the domain
    expect(mail.from).toBe("no-reply@localhost");
    expect(mail.text).toContain("Héllo,");
    expect(mail.links).toEqual([link]);
    expect(seen).toContain("Confirm your address — Prim");
  });

  it("serves the messages, newest first, only with the secret", async () => {
    const mailer = createMailer({ url: capture.smtpUrl, from: "Prim <no-reply@localhost>" });
    await mailer.send({ to: "b@example.test", subject: "second", text: "see http://localhost/x" });
    mailer.close();
    await capture.waitFor((m) => m.subject === "second");
    expect((await fetch(`${capture.url}/messages`)).status).toBe(401);
    expect((await fetch(`${capture.url}/messages`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const padded = { authorization: `Bearer ${SECRET} trailing` };
    expect((await fetch(`${capture.url}/messages`, { headers: padded })).status).toBe(401);
    // The scheme in any case, spaces after it (RFC 6750: @prim/wire's bearerToken).
    const lower = { authorization: `bearer  ${SECRET}` };
    expect((await fetch(`${capture.url}/messages`, { headers: lower })).status).toBe(200);
    const res = await fetch(`${capture.url}/messages`, { headers: { authorization: `Bearer ${SECRET}` } });
    expect(res.status).toBe(200);
    const listed = (await res.json()) as { subject: string; links: string[] }[];
    expect(listed.map((m) => m.subject)).toEqual(["second", "Confirm your address — Prim"]);
    expect(listed[0]?.links).toEqual(["http://localhost/x"]);
  });

  it("waits for a message that has not come yet, and gives up on one that never does", async () => {
    const later = capture.waitFor((m) => m.to.includes("late@example.test"));
    const mailer = createMailer({ url: capture.smtpUrl, from: "Prim <no-reply@localhost>" });
    await mailer.send({ to: "late@example.test", subject: "late", text: "hi" });
    mailer.close();
    expect((await later).subject).toBe("late");
    await expect(capture.waitFor((m) => m.subject === "never", 50)).rejects.toThrow(/no matching mail/);
  });
});
